import Testing
@testable import HTTP

@Suite struct ResponseTests {
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func aResponseHasStatusHeadersLengthAndBody() {
        let response = HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        #expect(text(response.encoded(keepAlive: true))
            == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        #expect(text(response.encoded(keepAlive: false, date: "Tue, 01 Dec 2026 08:00:00 GMT"))
            == "HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 08:00:00 GMT\r\nContent-Type: application/json\r\n"
            + "Content-Length: 2\r\nConnection: close\r\n\r\n{}")
        #expect(text(response.encoded(keepAlive: true, includeBody: false)).hasSuffix("Content-Length: 2\r\n\r\n"))
    }

    @Test func theEncoderOwnsFramingAndStripsLineBreaks() {
        let response = HTTPResponse(status: HTTPStatus(200, "OK\r\nX: y"), headers: [
            "Content-Length": "999", "Transfer-Encoding": "chunked", "connection": "keep-alive",
            "X-Name": "a\r\nSet-Cookie: evil",
        ])
        #expect(text(response.encoded(keepAlive: true))
            == "HTTP/1.1 200 OK  X: y\r\nX-Name: a  Set-Cookie: evil\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func errorsAreTinyTextThatClose() {
        let bytes = HTTPResponse.error(HTTPError(.headerFieldsTooLarge, "too big")).encoded(keepAlive: false)
        #expect(text(bytes) == "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: 8\r\nConnection: close\r\n\r\ntoo big\n")
    }

    @Test func chunkedAndUntilCloseHeads() {
        var bytes = HTTPResponseHead(status: .ok, headers: ["Content-Type": "text/plain"])
            .encoded(framing: .chunked, keepAlive: true)
        HTTPChunkedEncoding.appendChunk(Array("hello, world".utf8), to: &bytes)
        HTTPChunkedEncoding.appendChunk([UInt8](), to: &bytes)
        HTTPChunkedEncoding.appendEnd(to: &bytes)
        #expect(text(bytes) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "C\r\nhello, world\r\n0\r\n\r\n")
        let stream = HTTPResponseHead.eventStream.encoded(framing: .untilClose, keepAlive: true)
        #expect(text(stream) == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
            + "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n")
    }

    @Test func aChunkedResponseBodyReadsBackThroughTheParser() throws {
        // The request parser's chunked decoder is the reference reading of what the encoder writes.
        var body = wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "")
        let pieces = ["a", String(repeating: "b", count: 300), "c\r\nd"]
        for piece in pieces { HTTPChunkedEncoding.appendChunk(Array(piece.utf8), to: &body) }
        HTTPChunkedEncoding.appendEnd(to: &body)
        #expect(onlyRequest(body)?.bodyText == pieces.joined())
    }

    static let dates: [(Int64, String)] = [
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_796_112_000, "Tue, 01 Dec 2026 08:00:00 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
    ]

    @Test(arguments: dates) func datesAreIMFFixdate(_ seconds: Int64, _ expected: String) {
        #expect(HTTPDate.string(unixSeconds: seconds) == expected)
    }
}
