import Reactor

/// One blocking `GET` with `Connection: close`, read to the end: for checks between phases, never while the
/// driver's loop is measuring.
enum HTTPFetch {
    /// The status and the body (everything after the head) of `GET path`, within `timeout` seconds.
    static func get(_ path: String, host: String, port: UInt16, timeout: Double = 30) throws(LoadSetupError)
        -> (status: Int, body: [UInt8]) {
        var received: [UInt8] = []
        do {
            let socket = try StreamSocket.connect(host: host, port: port)
            defer { socket.close() }
            try socket.setBlocking(false)
            let request = Array("GET \(path) HTTP/1.1\r\nHost: load\r\nConnection: close\r\n\r\n".utf8)
            var written = 0
            let deadline = LoadClock.monotonicSeconds() + timeout
            while written < request.count {
                guard try socket.awaitReadiness(.writable, timeout: deadline - LoadClock.monotonicSeconds()) else {
                    throw LoadSetupError(description: "GET \(path): timed out writing")
                }
                if case .processed(let count) = try socket.write(request, from: written) { written += count }
            }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                guard try socket.awaitReadiness(.readable, timeout: deadline - LoadClock.monotonicSeconds()) else {
                    throw LoadSetupError(description: "GET \(path): timed out reading")
                }
                let result = try buffer.withUnsafeMutableBytes { raw throws(IOError) in try socket.read(into: raw) }
                guard case .processed(let count) = result else { continue }
                if count == 0 { break }
                received += buffer[0..<count]
            }
        } catch let error as LoadSetupError {
            throw error
        } catch {
            throw LoadSetupError(description: "GET \(path): \(error)")
        }
        let separator = Array("\r\n\r\n".utf8)
        guard received.count >= 12, received.starts(with: "HTTP/1.".utf8),
              let status = Int(String(decoding: received[9..<12], as: UTF8.self)),
              let headEnd = (0...(received.count - separator.count)).first(where: {
                  received[$0..<($0 + separator.count)].elementsEqual(separator)
              }) else {
            throw LoadSetupError(description: "GET \(path): not an HTTP answer")
        }
        return (status, Array(received[(headEnd + separator.count)...]))
    }
}
