import Testing
@testable import HTTP

/// The slowloris shape: a request trickling in byte by byte must cost O(n) and keep the timers honest.
@Suite struct IncrementalParsingTests {
    static let request = wire("POST /runners/ann/cheers HTTP/1.1", "Host: localhost:8080", "User-Agent: test",
                              "Content-Type: text/plain", "Content-Length: 9", "", "go ann go")

    @Test func aRequestFedOneByteAtATimeIsExaminedOnce() throws {
        var parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        let repeated = Array(repeating: Self.request, count: 50).flatMap { $0 }
        for byte in repeated {
            parser.append(CollectionOfOne(byte))
            while let request = try parser.nextRequest() { requests.append(request) }
        }
        #expect(requests.count == 50)
        #expect(requests.allSatisfy { $0.bodyText == "go ann go" })
        // Each byte is scanned exactly once however it arrives: linear, not quadratic.
        #expect(parser.examinedByteCount == repeated.count)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func aSlowHeadThatNeverEndsHitsTheLimitNotMemory() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ".utf8))
        var fed = parser.bufferedByteCount
        var thrown: HTTPError?
        while thrown == nil && fed < 100_000 {
            parser.append([UInt8](repeating: UInt8(ascii: "a"), count: 64))
            fed += 64
            do { _ = try parser.nextRequest() } catch { thrown = error }
        }
        #expect(thrown?.status == .headerFieldsTooLarge)
        #expect(fed > 8192 && fed <= 8192 + 64)
    }

    @Test func partialRequestTellsWhichTimerRuns() throws {
        var parser = HTTPRequestParser()
        #expect(!parser.hasPartialRequest)
        parser.append(Self.request.prefix(10))
        #expect(try parser.nextRequest() == nil)
        #expect(parser.hasPartialRequest)
        parser.append(Self.request.dropFirst(10))
        #expect(try parser.nextRequest()?.bodyText == "go ann go")
        #expect(!parser.hasPartialRequest)
        #expect(try parser.nextRequest() == nil)
    }

    @Test func theBufferIsCompactedOnAppend() throws {
        var parser = HTTPRequestParser()
        for _ in 0..<1000 {
            parser.append(Self.request)
            _ = try #require(try parser.nextRequest())
        }
        #expect(parser.buffer.count <= Self.request.count)
    }
}
