import Testing
@testable import HTTP

@Suite struct RequestParserTests {
    @Test func readsMethodPathQueryHeadersAndBody() throws {
        let request = try #require(onlyRequest(wire(
            "POST /runners/ann%20lee/cheers?x=1&msg=go+ann%21&flag&=skip&a%2Bb=c%26d HTTP/1.1",
            "host: example.org:8080", "Content-Type: application/x-www-form-urlencoded; charset=utf-8",
            "Content-Length: 11", "X-Empty:", "X-Spaces: \t padded \t", "", "text=hello!")))
        #expect(request.method == "POST")
        #expect(request.path == "/runners/ann lee/cheers")
        #expect(request.pathSegments == ["runners", "ann lee", "cheers"])
        #expect(request.rawQuery == "x=1&msg=go+ann%21&flag&=skip&a%2Bb=c%26d")
        #expect(request.queryItems == [HTTPQueryItem("x", "1"), HTTPQueryItem("msg", "go ann!"), HTTPQueryItem("flag", ""),
                                       HTTPQueryItem("", "skip"), HTTPQueryItem("a+b", "c&d")])
        #expect(request.query("msg") == "go ann!")
        #expect(request.query("nope") == nil)
        #expect(request.headers["HOST"] == "example.org:8080")
        #expect(request.host == "example.org:8080")
        #expect(request.headers["x-empty"] == "")
        #expect(request.headers["X-SPACES"] == "padded")
        #expect(request.mediaType == "application/x-www-form-urlencoded")
        #expect(request.bodyText == "text=hello!")
        #expect(try request.formItems() == [HTTPQueryItem("text", "hello!")])
        #expect(request.version == .http11)
        #expect(request.keepAlive)
    }

    @Test func pathSegmentsKeepEncodedSlashesInside() throws {
        let request = try #require(onlyRequest(wire("GET /runners/a%2Fb/badges HTTP/1.1", "Host: a", "", "")))
        #expect(request.pathSegments == ["runners", "a/b", "badges"])
        #expect(request.path == "/runners/a/b/badges")
        #expect(onlyRequest(wire("GET / HTTP/1.1", "Host: a", "", ""))?.pathSegments == [])
        #expect(onlyRequest(wire("GET /a/ HTTP/1.1", "Host: a", "", ""))?.pathSegments == ["a", ""])
        #expect(onlyRequest(wire("GET /events?watch=* HTTP/1.1", "Host: a", "", ""))?.query("watch") == "*")
    }

    @Test func absoluteFormTakesTheHostFromTheTarget() throws {
        let request = try #require(onlyRequest(wire("GET HTTP://live.example:8080/runs/7?x=1 HTTP/1.1", "Host: other", "", "")))
        #expect(request.host == "live.example:8080")
        #expect(request.path == "/runs/7")
        #expect(request.query("x") == "1")
        #expect(onlyRequest(wire("GET http://live.example HTTP/1.1", "", ""))?.path == "/")
        #expect(onlyRequest(wire("GET https://h?q=1 HTTP/1.1", "", ""))?.pathSegments == [])
        #expect(onlyRequest(wire("OPTIONS * HTTP/1.1", "Host: a", "", ""))?.path == "*")
    }

    struct KeepAliveCase: Sendable {
        let version: String
        let connection: String?
        let keepAlive: Bool
    }

    static let keepAliveCases: [KeepAliveCase] = [
        KeepAliveCase(version: "HTTP/1.1", connection: nil, keepAlive: true),
        KeepAliveCase(version: "HTTP/1.1", connection: "close", keepAlive: false),
        KeepAliveCase(version: "HTTP/1.1", connection: "Keep-Alive, CLOSE", keepAlive: false),
        KeepAliveCase(version: "HTTP/1.1", connection: "keep-alive", keepAlive: true),
        KeepAliveCase(version: "HTTP/1.1", connection: "upgrade", keepAlive: true),
        KeepAliveCase(version: "HTTP/1.0", connection: nil, keepAlive: false),
        KeepAliveCase(version: "HTTP/1.0", connection: "keep-alive", keepAlive: true),
        KeepAliveCase(version: "HTTP/1.0", connection: "Keep-Alive", keepAlive: true),
        KeepAliveCase(version: "HTTP/1.0", connection: "close", keepAlive: false),
    ]

    @Test(arguments: keepAliveCases) func keepAliveFollowsVersionAndConnection(_ test: KeepAliveCase) throws {
        var lines = ["GET / \(test.version)", "Host: a"]
        if let connection = test.connection { lines.append("Connection: \(connection)") }
        let request = try #require(onlyRequest(Array((lines + ["", ""]).joined(separator: "\r\n").utf8)))
        #expect(request.keepAlive == test.keepAlive)
    }

    @Test func http10NeedsNoHost() throws {
        let request = try #require(onlyRequest(wire("GET /healthz HTTP/1.0", "", "")))
        #expect(request.host == nil)
        #expect(request.version == .http10)
    }

    @Test func pipelinedRequestsComeOutInOrder() throws {
        let bytes = wire("GET /a HTTP/1.1", "Host: h", "", "")
            + wire("POST /b HTTP/1.1", "Host: h", "Content-Length: 3", "", "abc")
            + wire("", "GET /c HTTP/1.1", "Host: h", "Connection: close", "", "")  // a stray CRLF before it is allowed
            + wire("POST /d HTTP/1.1", "Host: h", "Transfer-Encoding: chunked", "", "3;name=value", "xyz",
                   "2", "!!", "0", "Trailer-Field: 1", "", "")
            + wire("GET /e HTTP/1.1")
        let result = outcome(bytes)
        #expect(result.error == nil)
        #expect(result.requests.map(\.path) == ["/a", "/b", "/c", "/d"])
        #expect(result.requests.map(\.body) == [[], Array("abc".utf8), [], Array("xyz!!".utf8)])
        #expect(result.requests.map(\.keepAlive) == [true, true, false, true])
        #expect(result.hasPartialRequest)
        for size in [1, 2, 3, 5, 64] {
            #expect(outcome(bytes, pieceSize: size) == result, "pieces of \(size)")
        }
    }

    @Test func aRequestAfterAnErrorIsNeverRead() {
        let result = outcome(wire("GET /a HTTP/1.1", "Host: h", "", "") + wire("GET /b HTTP/1.1", "", "")
            + wire("GET /c HTTP/1.1", "Host: h", "", ""))
        #expect(result.requests.map(\.path) == ["/a"])
        #expect(result.error?.status == .badRequest)
    }

    @Test func lastEventIDAndBasicCredentialsAreRead() throws {
        let request = try #require(onlyRequest(wire("GET /events?watch=ann HTTP/1.1", "Host: h", "Last-Event-ID: 42",
                                                     "Authorization: Basic YW5uOnMzY3I6ZXQ=", "", "")))
        #expect(request.lastEventID == "42")
        #expect(request.basicCredentials == HTTPBasicCredentials(user: "ann", password: "s3cr:et"))
    }
}

@Suite struct ExpectContinueTests {
    @Test func aHeadThatExpectsContinueIsFlaggedOnceUntilItsBodyArrives() throws {
        var parser = HTTPRequestParser()
        parser.append(wire("POST /runners/ann/cheers HTTP/1.1", "Host: h", "Expect: 100-Continue", "Content-Length: 2", "", ""))
        #expect(try parser.nextRequest() == nil)
        let taken1 = parser.takeContinueRequest()
        #expect(taken1)
        let taken2 = parser.takeContinueRequest()
        #expect(!taken2)
        parser.append(Array("hi".utf8))
        #expect(try parser.nextRequest()?.bodyText == "hi")
        let taken3 = parser.takeContinueRequest()
        #expect(!taken3)
    }

    @Test func noBodyOrHTTP10MeansNoContinue() throws {
        var parser = HTTPRequestParser()
        parser.append(wire("GET / HTTP/1.1", "Host: h", "Expect: 100-continue", "", ""))
        _ = try #require(try parser.nextRequest())
        let taken4 = parser.takeContinueRequest()
        #expect(!taken4)
        parser.append(wire("POST / HTTP/1.0", "Expect: 100-continue", "Content-Length: 1", "", ""))
        #expect(try parser.nextRequest() == nil)
        let taken5 = parser.takeContinueRequest()
        #expect(!taken5)
    }

    @Test func methodNotAllowedSaysWhatIs() {
        let bytes = HTTPResponse.methodNotAllowed(allowing: ["GET", "HEAD"]).encoded(keepAlive: true)
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Allow: GET, HEAD\r\nContent-Length: 16\r\n\r\nuse GET or HEAD\n")
        #expect(String(decoding: HTTPResponse.continueHead, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
    }
}
