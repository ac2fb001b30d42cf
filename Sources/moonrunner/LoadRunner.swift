import Reactor
import Wire

/// A runner: `iam:NAME`, then fixes along a straight synthetic path north at 3 m/s with accuracy 5, each
/// stamped with the wall clock at send time (microseconds, strictly increasing). Fixes wait in a FIFO until
/// an `ack:` covers them; flat out, at most `pipeline` fixes are unacknowledged at once.
final class LoadRunner: LoadPeer {
    /// Metres per degree of latitude.
    private static let metresPerDegree = 111_320.0
    /// Running speed along the path.
    private static let speed = 3.0

    /// 0-based index; the name is `PREFIX-INDEX`.
    let index: Int
    /// The runner name.
    let name: String
    private let originLatitude: Double
    private let originLongitude: Double
    /// Wall-clock µs of the first fix (the path starts there), 0 before it.
    private var firstMicros: Int64 = 0
    private var lastMicros: Int64 = 0
    /// Fixes written (or queued to be written).
    private(set) var sent = 0
    /// Fixes covered by an `ack:`.
    private(set) var acknowledged = 0
    /// `pace:` lines about itself (the server echoes each accepted fix's pace to the runner too).
    private(set) var ownPaceReceived = 0
    /// Timestamps of fixes not acknowledged yet, oldest first, from `unackedHead`.
    private var unacked: [Int64] = []
    private var unackedHead = 0

    init(socket: StreamSocket, driver: LoadDriver, index: Int, name: String) {
        self.index = index
        self.name = name
        // Distinct starting points spread over a few kilometres of Bavaria: valid, non-zero coordinates.
        originLatitude = 48.0 + Double(index % 1000) * 0.002
        originLongitude = 11.0 + Double(index / 1000) * 0.02
        super.init(socket: socket, driver: driver)
    }

    /// Fixes sent but not acknowledged.
    var inFlight: Int { sent - acknowledged }

    /// Sends `iam:NAME`.
    func start() { send(Array("iam:\(name)\n".utf8)) }

    /// Queues one fix stamped now (without writing it).
    private func queueFix(wallClock now: Int64) {
        let micros = max(now, lastMicros + 1)
        if firstMicros == 0 { firstMicros = micros }
        lastMicros = micros
        let metres = Double(micros - firstMicros) / 1e6 * Self.speed
        let latitude = originLatitude + metres / Self.metresPerDegree
        withOutput { buffer in
            buffer.append(contentsOf: "loc:".utf8)
            NumberFormat.append(latitude, decimals: 7, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            NumberFormat.append(originLongitude, decimals: 7, to: &buffer)
            buffer.append(contentsOf: ",5,".utf8)
            LoadClock.appendTimestamp(micros, to: &buffer)
            buffer.append(UInt8(ascii: "\n"))
        }
        unacked.append(micros)
        sent += 1
    }

    /// Paced mode: one fix now.
    func sendOneFix() {
        guard state == .ready else { return }
        queueFix(wallClock: LoadClock.wallMicroseconds())
        flush()
    }

    /// Flat-out mode: fills the pipeline up to `pipeline` unacknowledged fixes, unless the socket is still
    /// full (then the fixes would wait in this process and their `ts` would no longer be the send time).
    func fillPipeline() {
        guard state == .ready, driver.isFlatOutStreaming, !hasPendingOutput else { return }
        let room = driver.configuration.pipeline - inFlight
        guard room >= max(1, driver.configuration.pipeline / 16) else { return }
        for _ in 0..<room { queueFix(wallClock: LoadClock.wallMicroseconds()) }
        flush()
    }

    override func finishedReading() { fillPipeline() }

    override func socketDrained() { fillPipeline() }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if line.starts(with: "ack:".utf8) {
            guard let stamp = LoadClock.timestampMicros(in: line) else {
                driver.noteProtocolError("ack without ts")
                return
            }
            driver.noteAck(latency: now - stamp)
            while unackedHead < unacked.count && unacked[unackedHead] <= stamp {
                unackedHead += 1
                acknowledged += 1
            }
            if unackedHead >= 4096 && unackedHead * 2 >= unacked.count {
                unacked.removeFirst(unackedHead)
                unackedHead = 0
            }
        } else if line.starts(with: "pace:".utf8) {
            ownPaceReceived += 1
        } else if line.starts(with: "ok:iam".utf8) {
            state = .ready
        } else {
            super.received(line, at: now)
        }
    }
}
