import Reactor
import Wire

/// A runner: `iam:NAME`, then fixes along a straight synthetic path north at 3 m/s with accuracy 5. Each is
/// stamped with the wall clock at send time (microseconds, strictly increasing), or, with a fix interval, with
/// a phone clock that starts at the wall clock and advances by the interval per fix. Flat out, at most
/// `pipeline` fixes are unacknowledged at once.
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
    /// Fixes covered by an `ack:` (acks are cumulative: every fix up to the named one).
    private(set) var acknowledged = 0
    /// `pace:` lines about itself (the server echoes each accepted fix's pace to the runner too).
    private(set) var ownPaceReceived = 0
    /// Its own run, split, badge and end events (what each of its watchers should get too).
    private(set) var ownOtherEvents = 0
    /// Per fix sent, oldest first: its `ts` and the wall-clock µs it was written. `log[i]` is fix `logBase + i`.
    /// Fixes leave once the ack and every watcher have moved past them.
    private var log: [(stamp: Int64, sentAt: Int64)] = []
    private var logBase = 0
    /// Per watching spectator: the index of the next fix its `pace:` lines may match.
    private var watcherCursors: [Int] = []

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

    /// The token `device:` gave (device benchmarks).
    private(set) var deviceToken: String?

    /// Sends `device:`.
    func askForDeviceToken() { send(Array("device:\n".utf8)) }

    /// Queues one fix stamped now (without writing it).
    private func queueFix(wallClock now: Int64) {
        let micros: Int64
        if let interval = driver.fixIntervalMicros, firstMicros != 0 {
            micros = lastMicros + interval
        } else {
            micros = max(now, lastMicros + 1)
        }
        if firstMicros == 0 { firstMicros = micros }
        lastMicros = micros
        let metres = Double(micros - firstMicros) / 1e6 * Self.speed
        let latitude = originLatitude + metres / Self.metresPerDegree
        withOutput { FixLine.append(latitude: latitude, longitude: originLongitude, micros: micros, to: &$0) }
        log.append((micros, now))
        sent += 1
    }

    /// Registers a spectator of this runner; returns its slot for ``sendTime(ofStamp:watcher:)``.
    func addWatcher() -> Int {
        watcherCursors.append(logBase)
        return watcherCursors.count - 1
    }

    /// When the fix with this `ts` was written, for watcher `slot` (whose `pace:` lines come in `ts` order,
    /// perhaps with gaps when the server conflated some); nil if no fix had that `ts`.
    func sendTime(ofStamp stamp: Int64, watcher slot: Int) -> Int64? {
        var cursor = watcherCursors[slot]
        while cursor - logBase < log.count && log[cursor - logBase].stamp < stamp { cursor += 1 }
        watcherCursors[slot] = cursor
        guard cursor - logBase < log.count, log[cursor - logBase].stamp == stamp else { return nil }
        return log[cursor - logBase].sentAt
    }

    /// Drops the log's oldest half once everyone has moved past it, so memory follows the pipeline, not the run.
    private func trimLog() {
        guard log.count >= 65_536 else { return }
        let oldestNeeded = watcherCursors.reduce(acknowledged) { min($0, $1) }
        let removable = oldestNeeded - logBase
        guard removable >= log.count / 2 else { return }
        log.removeFirst(removable)
        logBase += removable
    }

    /// Fixes it may still send (``LoadConfiguration/fixesPerRunner``).
    private var fixesLeft: Int { driver.configuration.fixesPerRunner.map { $0 - sent } ?? .max }

    /// Paced mode: one fix now.
    func sendOneFix() {
        guard state == .ready, fixesLeft > 0 else { return }
        queueFix(wallClock: LoadClock.wallMicroseconds())
        flush()
    }

    /// Flat-out mode: fills the pipeline up to `pipeline` unacknowledged fixes, unless the socket is still
    /// full (then the fixes would wait in this process and their `ts` would no longer be the send time).
    func fillPipeline() {
        guard state == .ready, driver.isFlatOutStreaming, !hasPendingOutput else { return }
        let room = min(driver.configuration.pipeline - inFlight, fixesLeft)
        guard room >= min(max(1, driver.configuration.pipeline / 16), fixesLeft), room > 0 else { return }
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
            var sentAt: Int64?
            while acknowledged - logBase < log.count && log[acknowledged - logBase].stamp <= stamp {
                sentAt = log[acknowledged - logBase].sentAt
                acknowledged += 1
            }
            if let sentAt { driver.noteAck(latency: now - sentAt) }
            trimLog()
        } else if line.starts(with: "pace:".utf8) {
            ownPaceReceived += 1
        } else if line.starts(with: "badge:".utf8) || line.starts(with: "split:".utf8) || line.starts(with: "run:".utf8)
                    || line.starts(with: "end:".utf8) {
            ownOtherEvents += 1
        } else if line.starts(with: "ok:iam".utf8) {
            state = .ready
        } else if line.starts(with: "ok:device token=".utf8) {
            deviceToken = String(decoding: line["ok:device token=".utf8.count...], as: UTF8.self)
        } else {
            super.received(line, at: now)
        }
    }
}
