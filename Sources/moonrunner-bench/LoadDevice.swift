import Reactor
import Wire

/// A phone app on the benchmark's loop: one OsmAnd position per HTTP request (`GET /osmand?id=TOKEN&…`),
/// the next one only after the answer (as the apps do), on one keep-alive connection or a new connection per
/// position. Positions run north at 3 m/s, stamped with the wall clock.
final class LoadDevice: LoadPeer {
    let token: String
    let keepAlive: Bool
    /// The device's position counter, shared with the device that replaces it when connections are not reused.
    let counter: DeviceCounter
    private var sentAt: Int64 = 0
    private var awaitingBody = false

    /// Positions sent and answered, and the answers' latency, kept across reconnections.
    final class DeviceCounter {
        var sent = 0
        var answered = 0
        var failures = 0
        var lastStamp: Int64 = 0
        let latitude: Double
        init(latitude: Double) { self.latitude = latitude }
    }

    init(socket: StreamSocket, driver: LoadDriver, token: String, keepAlive: Bool, counter: DeviceCounter) {
        self.token = token
        self.keepAlive = keepAlive
        self.counter = counter
        super.init(socket: socket, driver: driver)
        state = .ready
    }

    /// Sends the next position.
    func sendPosition() {
        guard state == .ready else { return }
        let now = LoadClock.wallMicroseconds()
        let micros = max(now, counter.lastStamp + 1_000)  // at least a millisecond apart, as the server counts them
        counter.lastStamp = micros
        let metres = Double(counter.sent) * 3
        var request: [UInt8] = []
        request.append(contentsOf: "GET /osmand?id=\(token)&timestamp=".utf8)
        LoadClock.appendTimestamp(micros, to: &request)
        request.append(contentsOf: "&lat=".utf8)
        NumberFormat.append(counter.latitude + metres / 111_320, decimals: 7, to: &request)
        request.append(contentsOf: "&lon=11.0000000&accuracy=5 HTTP/1.1\r\nHost: load\r\n".utf8)
        if !keepAlive { request.append(contentsOf: "Connection: close\r\n".utf8) }
        request.append(contentsOf: "\r\n".utf8)
        sentAt = now
        counter.sent += 1
        send(request)
    }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        // The answer: status line, headers, a blank line, then a short JSON body on its own line ("{}").
        if line.starts(with: "HTTP/1.1 ".utf8) {
            if !line.starts(with: "HTTP/1.1 200".utf8) {
                counter.failures += 1
                driver.noteServerError(String(decoding: line, as: UTF8.self))
            }
            awaitingBody = true
        } else if awaitingBody && line.starts(with: "{".utf8) {
            awaitingBody = false
            counter.answered += 1
            driver.noteDeviceAnswer(latency: now - sentAt)
            if keepAlive {
                if driver.isStreamingDevices { sendPosition() }
            } else {
                close(reason: "done", expected: true)
                driver.deviceClosed(self)
            }
        }
    }
}
