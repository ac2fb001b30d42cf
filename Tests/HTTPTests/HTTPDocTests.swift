import Foundation
import Testing
@testable import HTTP
import Wire

/// protocol.md Part 2 is the HTTP contract: every request in it parses as shown, every error is the parser's
/// own answer, every JSON body is JSON, every event stream decodes, and every event object in it is the
/// JSON that Wire writes for one of Part 1's event lines.
@Suite struct HTTPDocTests {
    static let document: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    static var partTwo: Substring {
        guard let start = document.range(of: "\n# Part 2: HTTP") else { return "" }
        return document[start.lowerBound...]
    }

    /// The contents of the fenced blocks tagged `language`, in order.
    static func blocks(_ language: String, in text: Substring = partTwo) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if current != nil {
                    blocks.append(current!.joined(separator: "\n"))
                    current = nil
                } else if line == "```" + language {
                    current = []
                }
                continue
            }
            current?.append(line)
        }
        return blocks
    }

    struct Exchange: Sendable, CustomTestStringConvertible {
        let request: String
        let status: Int
        let headers: [(String, String)]
        let body: String
        var testDescription: String { String(request.prefix { $0 != "\n" }) }
    }

    static let exchanges: [Exchange] = blocks("http").map { block in
        let lines = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let split = lines.firstIndex { $0.hasPrefix("HTTP/1.1 ") } ?? lines.count
        let request = lines[..<split].joined(separator: "\n")
        let response = Array(lines[split...])
        let status = response.first.flatMap { Int($0.dropFirst(9).prefix(3)) } ?? 0
        let blank = response.firstIndex(of: "") ?? response.count
        let headers = response.dropFirst().prefix(blank - 1).map { line -> (String, String) in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            return (String(line[..<colon]), line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
        }
        let body = response.dropFirst(blank + 1).joined(separator: "\n")
        return Exchange(request: request, status: status, headers: headers, body: body)
    }

    /// The JSON Wire writes for each event line of Part 1.
    static let documentedEventJSON: [String] = document.split(separator: "\n").filter { $0.hasPrefix("< ") }
        .compactMap { try? ServerEvent(line: String($0.dropFirst(2))).json }

    @Test func partTwoHasExamples() {
        #expect(Self.exchanges.count >= 8)
        #expect(Self.blocks("json").count >= 2)
    }

    @Test(arguments: exchanges) func eachRequestGetsTheDocumentedAnswer(_ exchange: Exchange) throws {
        // The example shows LF; the wire has CRLF.
        var request = exchange.request
        while request.hasSuffix("\n") { request.removeLast() }
        let hasBody = request.contains("\n\n")
        let bytes = Array((request + (hasBody ? "" : "\n\n")).replacingOccurrences(of: "\n", with: "\r\n").utf8)
        let result = outcome(bytes)
        #expect(HTTPStatus.all.contains { $0.code == exchange.status }, "unknown status \(exchange.status)")
        if let error = result.error {
            #expect(error.status.code == exchange.status)
            #expect(exchange.body == error.reason, "the documented reason is the parser's")
            #expect(exchange.headers.contains { $0.0 == "Connection" && $0.1 == "close" })
        } else {
            #expect(result.requests.count == 1 && !result.hasPartialRequest, "\(exchange.request)")
            // A request the parser takes is answered by its route: its errors (404, or a position's 400) never
            // close the connection the way a malformed request does.
            #expect(exchange.status < 500)
            if exchange.status >= 400 { #expect(!exchange.headers.contains { $0.0 == "Connection" && $0.1 == "close" }) }
        }
        let type = exchange.headers.first { $0.0 == "Content-Type" }?.1 ?? ""
        if type.hasPrefix("application/json") {
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(exchange.body.utf8)) }
        }
        if type.hasPrefix("text/event-stream") {
            var decoder = ServerSentEventDecoder()
            let messages = decoder.feed(Array(exchange.body.utf8))
            #expect(messages.count >= 3)
            #expect(decoder.retry == 3000)
            #expect(decoder.commentCount >= 1)
            for message in messages {
                let object = try JSONSerialization.jsonObject(with: Data(message.data.utf8)) as? [String: Any]
                #expect(object?["kind"] as? String == message.event, "event: is the JSON's kind")
                // Broadcast events carry the server's event number; the late joiner's snapshot carries none.
                #expect(!message.lastEventID.isEmpty || message.event == "track")
            }
        }
    }

    @Test func everyEventObjectIsWiresJSONOfADocumentedLine() throws {
        let texts = Self.blocks("json") + Self.exchanges.map(\.body)
        var checked = 0
        for text in texts {
            var rest = Substring(text)
            while let range = rest.range(of: #"{"kind":""#) {
                let kind = rest[range.upperBound...].prefix { $0 != "\"" }
                if ServerEvent.kinds.contains(String(kind)) {
                    let candidate = rest[range.lowerBound...]
                    #expect(Self.documentedEventJSON.contains { candidate.hasPrefix($0) },
                            "\(candidate.prefix(120)) is not Wire's JSON of a Part 1 example")
                    checked += 1
                }
                rest = rest[range.upperBound...]
            }
        }
        #expect(checked >= 9)
    }

    @Test func everyJSONBlockParses() {
        for block in Self.blocks("json") {
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(block.utf8)) }
        }
    }

    @Test func documentedLimitsMatchTheCode() {
        let limits = HTTPLimits.standard
        let text = String(Self.partTwo)
        #expect(text.contains("| \(limits.maximumHeadBytes) bytes | 431"))
        #expect(text.contains("| \(limits.maximumHeaderCount) fields | 431"))
        #expect(text.contains("| \(limits.maximumBodyBytes) bytes (after chunked decoding) | 413"))
        #expect(text.contains("| \(HTTPRequestParser.maximumChunkLineBytes) bytes | 400"))
        #expect(text.contains("1–\(Command.Limits.cheerLength) characters"))
        #expect(text.contains("`limit` default \(Command.Limits.defaultRunsLimit), at most \(Command.Limits.maximumRunsLimit)"))
    }

    @Test func everyPageFileAndIdIsDocumented() {
        let text = String(Self.partTwo)
        for url in ["`GET /`", "`GET /runners/NAME`", "`GET /runs/ID`", "`GET /runners/NAME/badges`", "`GET /events?watch=NAME`",
                    "`GET /api/overview`", "`GET /api/runners/NAME`", "`GET /api/runs/ID`",
                    "`GET /api/runners/NAME/runs?offset=&limit=`", "`GET /api/runners/NAME/badges`", "`GET /api/badges`",
                    "`GET /courses/NAME`", "`GET /api/courses/NAME`",
                    "`POST /runners/NAME/cheers`", "`GET /runs/ID.gpx`", "`GET /metrics`", "`GET /healthz`"] {
            #expect(text.contains(url), "\(url) not in Part 2")
        }
    }
}
