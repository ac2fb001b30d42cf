/// A response with its whole body in memory, encoded with `Content-Length`.
///
/// The encoder owns framing: `Content-Length`, `Transfer-Encoding` and `Connection` given in `headers`
/// are dropped and written from the arguments instead, so a handler can't produce an ambiguous frame.
public struct HTTPResponse: Sendable, Hashable {
    /// The status.
    public var status: HTTPStatus
    /// Fields other than framing, e.g. `Content-Type`, `Cache-Control`, `Allow`, `Content-Disposition`.
    public var headers: HTTPHeaders
    /// The body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: HTTPStatus, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response; `text` gets a trailing newline if it has none.
    public static func text(_ status: HTTPStatus, _ text: String) -> HTTPResponse {
        var body = Array(text.utf8)
        if body.last != ASCII.lf { body.append(ASCII.lf) }
        return HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: body)
    }

    /// The tiny answer to a parse error: its status and its reason as text. Send it with
    /// `keepAlive: false` and close (`HTTPError`s leave the connection's framing unknown).
    public static func error(_ error: HTTPError) -> HTTPResponse {
        text(error.status, error.reason)
    }

    /// `405 Method Not Allowed` with the `Allow` header listing `methods`.
    public static func methodNotAllowed(allowing methods: [String]) -> HTTPResponse {
        var response = text(.methodNotAllowed, "use " + methods.joined(separator: " or "))
        response.headers.add("Allow", methods.joined(separator: ", "))
        return response
    }

    /// `HTTP/1.1 100 Continue` and the empty line: the interim answer to `Expect: 100-continue`.
    public static let continueHead: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A JSON body (`application/json`) the caller has already encoded.
    public static func json(_ bytes: [UInt8], status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                     body: bytes)
    }

    /// Appends status line, headers (with `Content-Length`, plus `Connection: close` unless `keepAlive`,
    /// plus `Date` if given) and, unless `includeBody` is false (answers to HEAD), the body.
    public func append(to buffer: inout [UInt8], keepAlive: Bool, date: String? = nil, includeBody: Bool = true) {
        let head = HTTPResponseHead(status: status, headers: headers)
        head.append(to: &buffer, framing: .length(body.count), keepAlive: keepAlive, date: date)
        if includeBody { buffer.append(contentsOf: body) }
    }

    /// The encoded response.
    public func encoded(keepAlive: Bool, date: String? = nil, includeBody: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + body.count)
        append(to: &bytes, keepAlive: keepAlive, date: date, includeBody: includeBody)
        return bytes
    }
}

/// A response's status line and headers alone, for bodies that are streamed (chunked or until close).
public struct HTTPResponseHead: Sendable, Hashable {
    /// How the body that follows is delimited.
    public enum Framing: Sendable, Hashable {
        /// `Content-Length: N`.
        case length(Int)
        /// `Transfer-Encoding: chunked`; send `HTTPChunkedEncoding` chunks and its last chunk.
        case chunked
        /// No length: the body ends when the server closes (always with `Connection: close`). This is
        /// the cheapest framing for Server-Sent Events, which last until either side closes anyway.
        case untilClose
    }

    /// The status.
    public var status: HTTPStatus
    /// Fields other than framing.
    public var headers: HTTPHeaders

    /// Creates a head.
    public init(status: HTTPStatus, headers: HTTPHeaders = [:]) {
        self.status = status
        self.headers = headers
    }

    /// The head of an event stream: `text/event-stream`, never cached, never buffered by proxies.
    public static let eventStream = HTTPResponseHead(status: .ok, headers: [
        "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no",
    ])

    /// Appends `HTTP/1.1 CODE REASON`, the headers, the framing and connection fields, and the empty line.
    public func append(to buffer: inout [UInt8], framing: Framing, keepAlive: Bool, date: String? = nil) {
        buffer.append(contentsOf: "HTTP/1.1 \(status.code) ".utf8)
        Self.appendSanitized(status.reason, to: &buffer)
        buffer.append(contentsOf: [ASCII.cr, ASCII.lf])
        if let date { appendField("Date", date, to: &buffer) }
        for field in headers where !Self.isFraming(field.name) {
            appendField(field.name, field.value, to: &buffer)
        }
        switch framing {
        case .length(let count): appendField("Content-Length", String(count), to: &buffer)
        case .chunked: appendField("Transfer-Encoding", "chunked", to: &buffer)
        case .untilClose: break
        }
        if !keepAlive || framing == .untilClose { appendField("Connection", "close", to: &buffer) }
        buffer.append(contentsOf: [ASCII.cr, ASCII.lf])
    }

    /// The encoded head.
    public func encoded(framing: Framing, keepAlive: Bool, date: String? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes, framing: framing, keepAlive: keepAlive, date: date)
        return bytes
    }

    private func appendField(_ name: String, _ value: String, to buffer: inout [UInt8]) {
        Self.appendSanitized(name, to: &buffer)
        buffer.append(contentsOf: [UInt8(ascii: ":"), ASCII.space])
        Self.appendSanitized(value, to: &buffer)
        buffer.append(contentsOf: [ASCII.cr, ASCII.lf])
    }

    /// Writes `text` with CR, LF and NUL turned into spaces: no value can split a header (response splitting).
    static func appendSanitized(_ text: String, to buffer: inout [UInt8]) {
        for byte in text.utf8 {
            buffer.append(byte == ASCII.cr || byte == ASCII.lf || byte == 0 ? ASCII.space : byte)
        }
    }

    static func isFraming(_ name: String) -> Bool {
        ASCII.equalIgnoringCase(name, "Content-Length") || ASCII.equalIgnoringCase(name, "Transfer-Encoding")
            || ASCII.equalIgnoringCase(name, "Connection") || ASCII.equalIgnoringCase(name, "Date")
    }
}

/// The chunks of a `Transfer-Encoding: chunked` response body.
public enum HTTPChunkedEncoding {
    /// Appends `HEX CRLF bytes CRLF`; nothing for empty `bytes` (an empty chunk would end the body).
    public static func appendChunk(_ bytes: some Collection<UInt8>, to buffer: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        buffer.append(contentsOf: String(bytes.count, radix: 16, uppercase: true).utf8)
        buffer.append(contentsOf: [ASCII.cr, ASCII.lf])
        buffer.append(contentsOf: bytes)
        buffer.append(contentsOf: [ASCII.cr, ASCII.lf])
    }

    /// Appends the last chunk `0 CRLF CRLF` (no trailers).
    public static func appendEnd(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: "0\r\n\r\n".utf8)
    }
}
