import Foundation
import Reactor
#if canImport(Glibc)
import Glibc
#endif

/// A raw HTTP/1.1 client for tests: send bytes, read whole responses (Content-Length or until close) and
/// Server-Sent Events, each with a deadline (never a sleep).
public final class HTTPTestClient {
    public let socket: StreamSocket
    private var buffer: [UInt8] = []
    private var isClosed = false

    /// A response as read off the wire.
    public struct Response: CustomStringConvertible {
        public let status: Int
        public let headers: [(String, String)]
        public let body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        public var description: String { "\(status) \(headers) \(text.prefix(200))" }
    }

    /// One event of a stream.
    public struct StreamEvent: CustomStringConvertible {
        public var id: String?
        public var event: String?
        public var data: String
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        }
        public var description: String { "\(event ?? "message")#\(id ?? "-"): \(data.prefix(160))" }
    }

    public struct Timeout: Error, CustomStringConvertible {
        public let waitingFor: String
        public init(waitingFor: String) { self.waitingFor = waitingFor }
        public var description: String { "timed out waiting for \(waitingFor)" }
    }

    public init(port: UInt16) throws {
        socket = try StreamSocket.connect(host: "127.0.0.1", port: port)
    }

    /// Sends raw bytes.
    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let result = try bytes.withUnsafeBytes { try socket.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            if case .processed(let count) = result { offset += count } else { try wait(POLLOUT, 5) }
        }
    }

    /// `GET path` (keep-alive), answered.
    public func get(_ path: String, headers: String = "", timeout: Double = 10) throws -> Response {
        try send("GET \(path) HTTP/1.1\r\nHost: test\r\n\(headers)\r\n")
        return try response(timeout: timeout)
    }

    /// A POST with a body, answered.
    public func post(_ path: String, body: String, type: String = "text/plain", timeout: Double = 10) throws -> Response {
        try send("POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return try response(timeout: timeout)
    }

    /// The next whole response.
    public func response(timeout: Double = 10) throws -> Response {
        let deadline = Date().addingTimeInterval(timeout)
        var headEnd: Int?
        while true {
            if headEnd == nil, let end = find([13, 10, 13, 10]) { headEnd = end }
            if let end = headEnd {
                let head = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                let status = Int(head[0].split(separator: " ")[1]) ?? 0
                let headers = head.dropFirst().compactMap { line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                let bodyStart = end + 4
                if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }) {
                    if buffer.count >= bodyStart + length {
                        let body = Array(buffer[bodyStart..<(bodyStart + length)])
                        buffer.removeFirst(bodyStart + length)
                        return Response(status: status, headers: headers, body: body)
                    }
                } else if isClosed {
                    let body = Array(buffer[bodyStart...])
                    buffer = []
                    return Response(status: status, headers: headers, body: body)
                }
            }
            guard !isClosed else { throw Timeout(waitingFor: "a response (closed; have \(buffer.count) bytes)") }
            try fill(until: deadline, what: "a response")
        }
    }

    /// Reads a stream's head, then returns; events follow with `nextEvent`.
    public func openStream(_ query: String, headers: String = "", timeout: Double = 10) throws -> Response {
        try send("GET /events?\(query) HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\(headers)\r\n")
        let deadline = Date().addingTimeInterval(timeout)
        while find([13, 10, 13, 10]) == nil { try fill(until: deadline, what: "a stream head") }
        let end = find([13, 10, 13, 10])!
        let head = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(end + 4)
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Response(status: Int(head[0].split(separator: " ")[1]) ?? 0, headers: headers, body: [])
    }

    /// The next event of a stream (comments and `retry:` skipped).
    public func nextEvent(timeout: Double = 10) throws -> StreamEvent {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let end = find([10, 10]) {
                let block = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                var event = StreamEvent(data: "")
                var data: [String] = []
                for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                    if line.hasPrefix("id:") { event.id = line.dropFirst(3).trimmingCharacters(in: .whitespaces) }
                    if line.hasPrefix("event:") { event.event = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
                    if line.hasPrefix("data:") { data.append(String(line.dropFirst(5).drop { $0 == " " })) }
                }
                if data.isEmpty { continue }
                event.data = data.joined(separator: "\n")
                return event
            }
            try fill(until: deadline, what: "an event")
        }
    }

    /// Events until one of `kind`.
    public func events(until kind: String, timeout: Double = 10) throws -> [StreamEvent] {
        var seen: [StreamEvent] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let event = try nextEvent(timeout: max(0.01, deadline.timeIntervalSinceNow))
            seen.append(event)
            if event.event == kind { return seen }
        }
    }

    /// `HEAD path` on a connection the server then closes: the response's head, and the bytes that came after
    /// it (none, for a correct answer to HEAD).
    public func head(_ path: String, timeout: Double = 10) throws -> (response: Response, after: [UInt8]) {
        try send("HEAD \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        _ = try awaitClose(timeout: timeout)
        guard let end = find([13, 10, 13, 10]) else { throw Timeout(waitingFor: "a response head") }
        let head = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let after = Array(buffer[(end + 4)...])
        buffer = []
        return (Response(status: Int(head[0].split(separator: " ")[1]) ?? 0, headers: headers, body: []), after)
    }

    /// True once the server closed the connection (waiting up to `timeout`).
    public func awaitClose(timeout: Double = 10) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !isClosed { try fill(until: deadline, what: "close") }
        return true
    }

    public func close() { socket.close() }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for index in 0...(buffer.count - pattern.count) where buffer[index] == pattern[0] {
            if Array(buffer[index..<(index + pattern.count)]) == pattern { return index }
        }
        return nil
    }

    private func fill(until deadline: Date, what: String) throws {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { throw Timeout(waitingFor: what) }
        try wait(POLLIN, left)
        var chunk = [UInt8](repeating: 0, count: 65536)
        let result = try chunk.withUnsafeMutableBytes { try socket.read(into: $0) }
        guard case .processed(let count) = result else { return }
        if count == 0 { isClosed = true } else { buffer += chunk[0..<count] }
    }

    private func wait(_ events: Int32, _ timeout: Double) throws {
        var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(events), revents: 0)
        if poll(&descriptor, 1, Int32(max(1, timeout * 1000))) == 0 { throw Timeout(waitingFor: "readiness") }
    }
}
