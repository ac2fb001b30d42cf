/// The request line and header fields, read line by line as they complete.
struct HeadProgress: Sendable {
    /// Where the current (incomplete) line starts.
    var lineStart: Int
    /// Where the request line starts (after any empty lines a client left between requests).
    var headStart: Int?
    var requestLine: RequestLine?
    var headers: [HTTPHeader] = []

    init(lineStart: Int) {
        self.lineStart = lineStart
    }

    mutating func shift(by offset: Int) {
        lineStart -= offset
        headStart = headStart.map { $0 - offset }
    }
}

/// A parsed request line.
struct RequestLine: Sendable {
    var method: String
    var target: String
    var version: HTTPVersion
    var path: String
    var pathSegments: [String]
    var rawQuery: String
    var queryItems: [HTTPQueryItem]
    /// The authority of an absolute-form target.
    var authority: String?
}

/// A validated head, waiting for its body.
struct RequestHead: Sendable {
    var line: RequestLine
    var headers: HTTPHeaders
    var host: String?
    var keepAlive: Bool
    var isChunked: Bool
    var contentLength: Int
    var expectsContinue: Bool

    func request(body: [UInt8]) -> HTTPRequest {
        HTTPRequest(method: line.method, target: line.target, path: line.path, pathSegments: line.pathSegments,
                    rawQuery: line.rawQuery, queryItems: line.queryItems, version: line.version, headers: headers,
                    host: host, body: body, keepAlive: keepAlive)
    }
}

extension HTTPRequestParser {
    /// Reads complete lines of the head; returns the validated head once the empty line arrives.
    mutating func scanHead(_ progress: inout HeadProgress) throws(HTTPError) -> RequestHead? {
        while true {
            let found = try nextLine(from: progress.lineStart, bound: requestStart + limits.maximumHeadBytes + 1)
            // The limit counts from the first byte of the request, so endless empty lines hit it too.
            if position - requestStart > limits.maximumHeadBytes {
                throw HTTPError(.headerFieldsTooLarge,
                                "request line and headers exceed \(limits.maximumHeadBytes) bytes")
            }
            guard let line = found else { return nil }
            progress.lineStart = position
            if progress.requestLine == nil {
                // RFC 9112 §2.2: ignore empty lines before a request line (left over after a body).
                if line.isEmpty { continue }
                progress.headStart = line.lowerBound
                progress.requestLine = try parseRequestLine(buffer[line])
            } else if line.isEmpty {
                return try validate(progress)
            } else {
                progress.headers.append(try parseField(buffer[line]))
                if progress.headers.count > limits.maximumHeaderCount {
                    throw HTTPError(.headerFieldsTooLarge, "more than \(limits.maximumHeaderCount) header fields")
                }
            }
        }
    }

    /// `METHOD SP request-target SP HTTP-version`, single spaces, nothing else.
    func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPError) -> RequestLine {
        let parts = line.split(separator: ASCII.space, maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw HTTPError.malformed("the request line is not METHOD SP TARGET SP VERSION")
        }
        guard parts[0].allSatisfy(ASCII.isTokenByte) else { throw HTTPError.malformed("the method is not a token") }
        let method = String(decoding: parts[0], as: UTF8.self)
        let version = try parseVersion(parts[2])
        var line = try parseTarget(parts[1], method: method)
        line.version = version
        return line
    }

    func parseVersion(_ bytes: ArraySlice<UInt8>) throws(HTTPError) -> HTTPVersion {
        let text = Array(bytes)
        let isDigit = { (byte: UInt8) in (byte &- UInt8(ascii: "0")) < 10 }
        guard text.count == 8, text[0..<5].elementsEqual("HTTP/".utf8), isDigit(text[5]),
              text[6] == UInt8(ascii: "."), isDigit(text[7]) else {
            throw HTTPError.malformed("the version is not HTTP/D.D")
        }
        guard let version = HTTPVersion(rawValue: String(decoding: text, as: UTF8.self)) else {
            throw HTTPError(.httpVersionNotSupported, "only HTTP/1.0 and HTTP/1.1 are spoken")
        }
        return version
    }

    /// Origin-form (`/path?query`), absolute-form (`http://host/path?query`, RFC 9112 §3.2.2: the
    /// authority then replaces Host) or asterisk-form for OPTIONS; authority-form (CONNECT) is refused.
    func parseTarget(_ bytes: ArraySlice<UInt8>, method: String) throws(HTTPError) -> RequestLine {
        guard bytes.allSatisfy(Self.isTargetByte) else {
            throw HTTPError.malformed("the request target has a character that must be percent-encoded")
        }
        let target = String(decoding: bytes, as: UTF8.self)
        if target == "*" {
            guard method == "OPTIONS" else { throw HTTPError.malformed("* is a target only for OPTIONS") }
            return RequestLine(method: method, target: target, version: .http11, path: "*", pathSegments: [],
                               rawQuery: "", queryItems: [], authority: nil)
        }
        var rest = bytes
        var authority: String?
        if rest.first != UInt8(ascii: "/") {
            guard let schemeEnd = Self.absoluteFormPrefixLength(rest) else {
                throw HTTPError.malformed("the request target must start with / or http://")
            }
            rest = rest.dropFirst(schemeEnd)
            let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
            let authorityBytes = rest[..<authorityEnd]
            guard !authorityBytes.isEmpty, !authorityBytes.contains(UInt8(ascii: "@")) else {
                throw HTTPError.malformed("an absolute-form target needs a host and no user info")
            }
            authority = String(decoding: authorityBytes, as: UTF8.self)
            rest = rest[authorityEnd...]
        }
        let queryStart = rest.firstIndex(of: UInt8(ascii: "?"))
        var pathBytes = rest[..<(queryStart ?? rest.endIndex)]
        if pathBytes.isEmpty { pathBytes = [UInt8(ascii: "/")] }
        let queryBytes = queryStart.map { rest[rest.index(after: $0)...] } ?? []
        guard let path = PercentDecoding.decode(pathBytes, plusAsSpace: false), !Self.hasControl(path) else {
            throw HTTPError.malformed("bad percent-encoding in the path")
        }
        var segments: [String] = []
        if pathBytes.count > 1 {
            for raw in pathBytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
                guard let segment = PercentDecoding.decode(raw, plusAsSpace: false) else {
                    throw HTTPError.malformed("bad percent-encoding in the path")
                }
                segments.append(segment)
            }
        }
        return RequestLine(method: method, target: target, version: .http11, path: path, pathSegments: segments,
                           rawQuery: String(decoding: queryBytes, as: UTF8.self),
                           queryItems: try FormURLEncoding.items(queryBytes), authority: authority)
    }

    /// RFC 3986's unreserved, reserved (minus `#`, a fragment is never sent) and `%`.
    static func isTargetByte(_ byte: UInt8) -> Bool { targetBytes[Int(byte)] }

    static let targetBytes = ASCII.table(alphanumericsAnd: "-._~!$&'()*+,;=:@/?%[]")

    static func absoluteFormPrefixLength(_ bytes: ArraySlice<UInt8>) -> Int? {
        if ASCII.equalIgnoringCase(bytes.prefix(7), "http://") { return 7 }
        if ASCII.equalIgnoringCase(bytes.prefix(8), "https://") { return 8 }
        return nil
    }

    static func hasControl(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// `name ":" OWS value OWS`: a token name directly followed by the colon; values of visible
    /// characters, spaces, tabs and obs-text; a line starting with whitespace is obs-fold, refused.
    func parseField(_ line: ArraySlice<UInt8>) throws(HTTPError) -> HTTPHeader {
        guard let first = line.first, !ASCII.isWhitespace(first) else {
            throw HTTPError.malformed("folded header line (obs-fold) is not accepted")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw HTTPError.malformed("a header line without a colon")
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(ASCII.isTokenByte) else {
            throw HTTPError.malformed("a header name is a token directly followed by a colon")
        }
        var value = line[(colon + 1)...]
        while let byte = value.first, ASCII.isWhitespace(byte) { value = value.dropFirst() }
        while let byte = value.last, ASCII.isWhitespace(byte) { value = value.dropLast() }
        guard value.allSatisfy({ $0 == ASCII.tab || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTPError.malformed("control character in the value of \(String(decoding: name, as: UTF8.self))")
        }
        return HTTPHeader(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// Host, framing and connection rules once the whole head is in.
    func validate(_ progress: HeadProgress) throws(HTTPError) -> RequestHead {
        guard let line = progress.requestLine else { throw HTTPError.malformed("no request line") }
        let headers = HTTPHeaders(progress.headers)
        let hosts = headers.values("Host")
        guard hosts.count <= 1 else { throw HTTPError.malformed("more than one Host header") }
        if line.version == .http11 && hosts.isEmpty && line.authority == nil {
            throw HTTPError.malformed("HTTP/1.1 requests need a Host header")
        }
        if let host = hosts.first, !host.utf8.allSatisfy(Self.isHostByte) {
            throw HTTPError.malformed("the Host header is not a host[:port]")
        }
        let codings = headers.listElements("Transfer-Encoding")
        let lengths = headers.values("Content-Length")
        var isChunked = false
        var contentLength = 0
        if !headers.values("Transfer-Encoding").isEmpty {
            guard line.version == .http11 else { throw HTTPError.malformed("Transfer-Encoding in an HTTP/1.0 request") }
            guard lengths.isEmpty else { throw HTTPError.malformed("both Content-Length and Transfer-Encoding") }
            // RFC 9112 §6.3: without chunked last the body's length is unknowable, so 400, not 501.
            guard let last = codings.last, ASCII.equalIgnoringCase(last, "chunked"),
                  codings.filter({ ASCII.equalIgnoringCase($0, "chunked") }).count == 1 else {
                throw HTTPError.malformed("Transfer-Encoding must end with a single chunked")
            }
            guard codings.count == 1 else {
                throw HTTPError(.notImplemented, "no transfer coding but chunked is supported")
            }
            guard limits.acceptsChunkedBodies else {
                throw HTTPError(.notImplemented, "chunked request bodies are not accepted")
            }
            isChunked = true
        } else if let length = lengths.first {
            guard lengths.count == 1 else { throw HTTPError.malformed("more than one Content-Length") }
            contentLength = try parseContentLength(length, limit: limits.maximumBodyBytes(forPath: line.path))
        }
        let connection = headers.listElements("Connection")
        let keepAlive: Bool
        if connection.contains(where: { ASCII.equalIgnoringCase($0, "close") }) {
            keepAlive = false
        } else {
            keepAlive = line.version == .http11 || connection.contains { ASCII.equalIgnoringCase($0, "keep-alive") }
        }
        let expectsContinue = line.version == .http11
            && headers.values("Expect").contains { ASCII.equalIgnoringCase($0, "100-continue") }
        return RequestHead(line: line, headers: headers, host: line.authority ?? hosts.first, keepAlive: keepAlive,
                           isChunked: isChunked, contentLength: contentLength, expectsContinue: expectsContinue)
    }

    func parseContentLength(_ text: String, limit: Int) throws(HTTPError) -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ ($0 &- UInt8(ascii: "0")) < 10 }) else {
            throw HTTPError.malformed("Content-Length is not a decimal number")
        }
        let digits = text.utf8.drop { $0 == UInt8(ascii: "0") }
        guard digits.count <= 9, let length = Int(text), length <= limit else {
            throw HTTPError(.contentTooLarge, "the body exceeds \(limit) bytes")
        }
        return length
    }

    /// reg-name, IPv4, `[IPv6]` and `:port` bytes.
    static func isHostByte(_ byte: UInt8) -> Bool { hostBytes[Int(byte)] }

    static let hostBytes = ASCII.table(alphanumericsAnd: "-._~!$&'()*+,;=:[]%")
}
