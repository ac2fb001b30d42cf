import Testing
@testable import HTTP

/// Hostile and malformed requests, each with the status it must get; every one of them also gets the
/// same answer when it arrives one byte at a time.
@Suite struct HostileRequestTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let status: Int
        var testDescription: String { name }
    }

    static let oversizedHead = wire("GET / HTTP/1.1", "Host: a", "X-Big: " + String(repeating: "a", count: 8200), "", "")
    static let manyHeaders = wire(["GET / HTTP/1.1", "Host: a"] + (0..<101).map { "X-\($0): 1" } + ["", ""])

    static let cases: [Case] = [
        // Request lines.
        Case(name: "empty method", bytes: wire(" / HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "two spaces", bytes: wire("GET  / HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "tab separator", bytes: wire("GET\t/ HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "missing version", bytes: wire("GET /", "Host: a", "", ""), status: 400),
        Case(name: "extra word", bytes: wire("GET / HTTP/1.1 x", "Host: a", "", ""), status: 400),
        Case(name: "lowercase version", bytes: wire("GET / http/1.1", "Host: a", "", ""), status: 400),
        Case(name: "version garbage", bytes: wire("GET / HTTP/1.x", "Host: a", "", ""), status: 400),
        Case(name: "HTTP/2.0", bytes: wire("GET / HTTP/2.0", "Host: a", "", ""), status: 505),
        Case(name: "HTTP/0.9", bytes: wire("GET / HTTP/0.9", "Host: a", "", ""), status: 505),
        Case(name: "HTTP/1.2", bytes: wire("GET / HTTP/1.2", "Host: a", "", ""), status: 505),
        Case(name: "method with slash", bytes: wire("GE/T / HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "relative target", bytes: wire("GET runners HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "authority-form", bytes: wire("CONNECT a:443 HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "asterisk for GET", bytes: wire("GET * HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "absolute-form with user info", bytes: wire("GET http://u@a/ HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "absolute-form without host", bytes: wire("GET http:/// HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "ftp scheme", bytes: wire("GET ftp://a/ HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "fragment", bytes: wire("GET /a#b HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "raw non-ASCII target", bytes: Array("GET /é HTTP/1.1\r\nHost: a\r\n\r\n".utf8), status: 400),
        Case(name: "quote in target", bytes: wire("GET /\"x HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "bad percent escape", bytes: wire("GET /a%zz HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "truncated percent escape", bytes: wire("GET /a% HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "encoded NUL in path", bytes: wire("GET /a%00 HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "encoded newline in path", bytes: wire("GET /a%0A HTTP/1.1", "Host: a", "", ""), status: 400),
        Case(name: "encoded invalid UTF-8 in query", bytes: wire("GET /?a=%FF HTTP/1.1", "Host: a", "", ""), status: 400),
        // Line ends and control characters.
        Case(name: "bare LF line ends", bytes: Array("GET / HTTP/1.1\nHost: a\n\n".utf8), status: 400),
        Case(name: "bare CR in request line", bytes: Array("GET /\r HTTP/1.1\r\nHost: a\r\n\r\n".utf8), status: 400),
        Case(name: "bare CR in a value", bytes: Array("GET / HTTP/1.1\r\nHost: a\rX: 1\r\n\r\n".utf8), status: 400),
        Case(name: "NUL in a value", bytes: Array("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n".utf8), status: 400),
        Case(name: "escape in a value", bytes: Array("GET / HTTP/1.1\r\nHost: a\r\nX: \u{1B}[31m\r\n\r\n".utf8), status: 400),
        Case(name: "DEL in a value", bytes: Array("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{7F}\r\n\r\n".utf8), status: 400),
        Case(name: "NUL in the request line", bytes: Array("GET /\u{0} HTTP/1.1\r\nHost: a\r\n\r\n".utf8), status: 400),
        // Header syntax.
        Case(name: "obs-fold with space", bytes: wire("GET / HTTP/1.1", "Host: a", "X-A: 1", " continued", "", ""), status: 400),
        Case(name: "obs-fold with tab", bytes: wire("GET / HTTP/1.1", "Host: a", "X-A: 1", "\tcontinued", "", ""), status: 400),
        Case(name: "whitespace before the first header", bytes: wire("GET / HTTP/1.1", " Host: a", "", ""), status: 400),
        Case(name: "space before colon", bytes: wire("GET / HTTP/1.1", "Host : a", "", ""), status: 400),
        Case(name: "no colon", bytes: wire("GET / HTTP/1.1", "Host: a", "Nonsense", "", ""), status: 400),
        Case(name: "empty name", bytes: wire("GET / HTTP/1.1", "Host: a", ": x", "", ""), status: 400),
        Case(name: "name with a slash", bytes: wire("GET / HTTP/1.1", "Host: a", "X/Y: 1", "", ""), status: 400),
        // Host.
        Case(name: "HTTP/1.1 without Host", bytes: wire("GET / HTTP/1.1", "Accept: */*", "", ""), status: 400),
        Case(name: "two Hosts", bytes: wire("GET / HTTP/1.1", "Host: a", "Host: b", "", ""), status: 400),
        Case(name: "Host with a path", bytes: wire("GET / HTTP/1.1", "Host: a/b", "", ""), status: 400),
        Case(name: "Host with a space", bytes: wire("GET / HTTP/1.1", "Host: a b", "", ""), status: 400),
        Case(name: "Host with user info", bytes: wire("GET / HTTP/1.1", "Host: u@a", "", ""), status: 400),
        // Framing: the request smuggling shapes.
        Case(name: "CL and TE", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: 4", "Transfer-Encoding: chunked", "", "0", "", ""), status: 400),
        Case(name: "TE and CL", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "Content-Length: 4", "", "0", "", ""), status: 400),
        Case(name: "obfuscated TE with space before colon", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding : chunked", "", "0", "", ""), status: 400),
        Case(name: "TE chunked, identity", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked, identity", "", "0", "", ""), status: 400),
        Case(name: "TE chunked twice", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked", "", "0", "", ""), status: 400),
        Case(name: "TE xchunked", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: xchunked", "", "0", "", ""), status: 400),
        Case(name: "TE identity alone", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: identity", "", ""), status: 400),
        Case(name: "TE empty", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: ", "", ""), status: 400),
        Case(name: "TE with vertical tab", bytes: Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\u{0B}\r\n\r\n0\r\n\r\n".utf8), status: 400),
        Case(name: "TE gzip, chunked", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: gzip, chunked", "", "0", "", ""), status: 501),
        Case(name: "TE in HTTP/1.0", bytes: wire("POST / HTTP/1.0", "Transfer-Encoding: chunked", "", "0", "", ""), status: 400),
        Case(name: "two Content-Lengths, equal", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: 1", "Content-Length: 1", "", "x"), status: 400),
        Case(name: "two Content-Lengths, different", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: 1", "Content-Length: 2", "", "xy"), status: 400),
        Case(name: "Content-Length list", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: 1, 1", "", "x"), status: 400),
        Case(name: "negative Content-Length", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: -1", "", ""), status: 400),
        Case(name: "plus Content-Length", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: +1", "", "x"), status: 400),
        Case(name: "hex Content-Length", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: 0x10", "", ""), status: 400),
        Case(name: "empty Content-Length", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length:", "", ""), status: 400),
        Case(name: "chunk size not hex", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "zz", "", ""), status: 400),
        Case(name: "chunk size with 0x", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "0x1", "a", "0", "", ""), status: 400),
        Case(name: "chunk size with leading space", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", " 1", "a", "0", "", ""), status: 400),
        Case(name: "chunk data without CRLF", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "1", "ab", "0", "", ""), status: 400),
        Case(name: "chunk lines with bare LF", bytes: Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\na\n0\n\n".utf8), status: 400),
        Case(name: "folded trailer", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "0", "T: 1", " more", "", ""), status: 400),
        // Limits.
        Case(name: "head over 8 KiB", bytes: oversizedHead, status: 431),
        Case(name: "101 header fields", bytes: manyHeaders, status: 431),
        Case(name: "endless empty lines", bytes: Array(String(repeating: "\r\n", count: 4200).utf8), status: 431),
        Case(name: "Content-Length over 16 KiB", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: 16385", "", ""), status: 413),
        Case(name: "Content-Length with 40 digits", bytes: wire("POST / HTTP/1.1", "Host: a", "Content-Length: " + String(repeating: "9", count: 40), "", ""), status: 413),
        Case(name: "chunk over 16 KiB", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "4001", ""), status: 413),
        Case(name: "huge chunk size", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "FFFFFFFFFFFFFFFFFFFF", ""), status: 413),
        Case(name: "chunks adding up over 16 KiB", bytes: wire(["POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", ""]
            + Array(repeating: ["2000", String(repeating: "x", count: 8192)], count: 3).flatMap { $0 } + ["0", "", ""]), status: 413),
        // Found by the fuzzer: a bare CR beyond a limit must not win over the limit when the input comes at once.
        Case(name: "bare CR beyond the head limit", bytes: Array(("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 8200) + "\rb\r\n\r\n").utf8), status: 431),
        Case(name: "bare CR beyond the chunk-line limit", bytes: Array(("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 300) + "\rx\r\n").utf8), status: 400),
        Case(name: "long chunk extension", bytes: wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "1;" + String(repeating: "e", count: 300), "a", "0", "", ""), status: 400),
    ]

    @Test(arguments: cases) func isRefusedWithItsStatus(_ test: Case) {
        let whole = outcome(test.bytes)
        #expect(whole.error?.status.code == test.status, "\(whole.error.map(String.init(describing:)) ?? "no error")")
        #expect(whole.requests.isEmpty)
        #expect(outcome(test.bytes, pieceSize: 1) == whole, "byte by byte differs")
    }

    @Test func aFailedParserKeepsFailingAndHoldsNothing() {
        var parser = HTTPRequestParser()
        parser.append(wire("GET / HTTP/1.1", "Host : a", "", ""))
        #expect(throws: HTTPError.self) { try parser.nextRequest() }
        parser.append(wire("GET / HTTP/1.1", "Host: a", "", ""))
        #expect(parser.hasFailed)
        #expect(parser.bufferedByteCount == 0)
        #expect(throws: HTTPError(.badRequest, "a header name is a token directly followed by a colon")) {
            try parser.nextRequest()
        }
    }

    @Test func chunkedBodiesCanBeRefused() {
        let limits = HTTPLimits(acceptsChunkedBodies: false)
        #expect(errorStatus(wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "0", "", ""),
                            limits: limits) == 501)
    }

    @Test func limitsAreExactBoundaries() {
        // A head of exactly the limit is fine; one byte more is 431.
        let base = wire("GET / HTTP/1.1", "Host: a", "X: ", "", "")
        let padding = 8192 - base.count
        let exact = wire("GET / HTTP/1.1", "Host: a", "X: " + String(repeating: "a", count: padding), "", "")
        #expect(exact.count == 8192)
        #expect(onlyRequest(exact) != nil)
        let over = wire("GET / HTTP/1.1", "Host: a", "X: " + String(repeating: "a", count: padding + 1), "", "")
        #expect(errorStatus(over) == 431)
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 16384)
        #expect(onlyRequest(wire("POST / HTTP/1.1", "Host: a", "Content-Length: 16384", "", "") + body)?.body == body)
        let small = HTTPLimits(maximumHeadBytes: 64, maximumHeaderCount: 2, maximumBodyBytes: 4)
        #expect(errorStatus(wire("POST / HTTP/1.1", "Host: a", "Content-Length: 5", "", "abcde"), limits: small) == 413)
        #expect(errorStatus(wire("GET / HTTP/1.1", "Host: a", "A: 1", "B: 2", "", ""), limits: small) == 431)
        #expect(onlyRequest(wire("GET / HTTP/1.1", "Host: a", "A: 1", "", ""), limits: small) != nil)
    }

    @Test func theHeadLimitTripsBeforeTheEndOfAnEndlessLine() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET /".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 8192))
        #expect(throws: HTTPError.self) { try parser.nextRequest() }
    }
}
