import HTTP
import Testing

/// Phone apps upload a queue of positions in one request: their paths may have a larger body than the rest.
@Suite struct BodyAllowanceTests {
    let limits = HTTPLimits(bodyAllowances: ["/osmand": 65_536])

    func outcome(_ head: String, body: [UInt8] = []) -> HTTPRequestParser.Outcome {
        let bytes = Array(head.utf8) + body
        return bytes.withUnsafeBytes { HTTPRequestParser.outcome(of: $0, pieceSize: 4096, limits: limits) }
    }

    @Test(arguments: [("/osmand", 65_536, 200), ("/osmand", 65_537, 413), ("/osmand/x", 16_385, 413), ("/", 16_385, 413),
                      ("/", 16_384, 200)])
    func aContentLengthIsJudgedByItsPathsLimit(path: String, length: Int, status: Int) {
        let result = outcome("POST \(path)?id=1 HTTP/1.1\r\nHost: a\r\nContent-Length: \(length)\r\n\r\n",
                             body: Array(repeating: UInt8(ascii: "x"), count: length))
        if status == 200 {
            #expect(result.error == nil && result.requests.first?.body.count == length)
        } else {
            #expect(result.error?.status.code == status && result.requests.isEmpty)
        }
    }

    @Test(arguments: [("/osmand", 40_000, true), ("/", 40_000, false)])
    func aChunkedBodyIsJudgedByItsPathsLimit(path: String, length: Int, accepted: Bool) {
        var body: [UInt8] = []
        for _ in 0..<(length / 8000) {
            body += Array("1f40\r\n".utf8) + Array(repeating: UInt8(ascii: "y"), count: 8000) + Array("\r\n".utf8)
        }
        body += Array("0\r\n\r\n".utf8)
        let result = outcome("POST \(path) HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", body: body)
        #expect((result.requests.first?.body.count == length) == accepted)
        #expect((result.error?.status.code == 413) == !accepted)
    }

    @Test func aConnectionMayBufferTheLargestBodyAnyPathTakes() {
        #expect(limits.largestBodyBytes == 65_536 && HTTPLimits().largestBodyBytes == 16_384)
        #expect(limits.maximumBodyBytes(forPath: "/elsewhere") == 16_384)
    }
}
