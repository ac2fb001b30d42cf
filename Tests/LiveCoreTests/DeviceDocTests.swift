@testable import LiveCore
import Foundation
import HTTP
import MoonRunnerTestSupport
import Testing
import Wire

/// protocol.md §15's phone-app examples, sent as written (with a real device token of `ann` for the example's)
/// to a real server: each gets the status and body the document shows.
@Suite struct DeviceDocTests {
    static let exampleToken = "9b2e61c04d5f4a8e8c7d3b1a0f6e2d49"

    /// The `http` blocks of §15 whose request goes to a phone endpoint: (request, status, body).
    static let examples: [(request: String, status: Int, body: String)] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("protocol.md")
        let document = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        guard let start = document.range(of: "\n## 15. ") else { return [] }
        let section = document[start.upperBound...].prefix { _ in true }
        var blocks: [[String]] = [], current: [String]?
        for line in section.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("## ") { break }
            if line.hasPrefix("```") {
                if let block = current { blocks.append(block); current = nil } else if line == "```http" { current = [] }
                continue
            }
            current?.append(line)
        }
        return blocks.compactMap { lines in
            guard let first = lines.first, first.contains(" /osmand") || first.contains(" /owntracks"),
                  let split = lines.firstIndex(where: { $0.hasPrefix("HTTP/1.1 ") }),
                  let status = Int(lines[split].dropFirst(9).prefix(3)) else { return nil }
            let response = lines[split...]
            let blank = response.firstIndex(of: "") ?? response.endIndex
            return (lines[..<split].joined(separator: "\n"), status, response[(blank + 1)...].joined(separator: "\n"))
        }
    }()

    /// The example request with `token` for the example's, its Basic credentials and Content-Length made anew.
    static func wire(_ example: String, token: String) -> String {
        let parts = example.components(separatedBy: "\n\n")
        let body = parts.dropFirst().joined(separator: "\n\n").replacingOccurrences(of: exampleToken, with: token)
        var head = parts[0].replacingOccurrences(of: exampleToken, with: token).split(separator: "\n").map(String.init)
        head = head.map { line in
            if line.hasPrefix("Content-Length:") { return "Content-Length: \(body.utf8.count)" }
            if line.hasPrefix("Authorization: Basic ") {
                return "Authorization: " + HTTPBasicCredentials(user: "ann", password: token).authorization
            }
            return line
        }
        return head.joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    @Test func theDocumentShowsPhoneExamples() {
        #expect(Self.examples.count >= 4, "§15 shows a position, a refusal, a batch and an encrypted OwnTracks message")
        #expect(Self.examples.contains { $0.request.contains("\"alarm\":\"sos\"") })
    }

    @Test func everyPhoneExampleGetsTheAnswerShown() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let token = try DeviceAppTests.deviceToken(ann)
                for example in Self.examples {
                    let app = server.web()
                    try app.send(Self.wire(example.request, token: token))
                    let answer = try app.response()
                    let first = example.request.prefix { $0 != "\n" }
                    #expect(answer.status == example.status, "\(first): \(answer)")
                    #expect(answer.text.trimmingCharacters(in: .newlines) == example.body.trimmingCharacters(in: .newlines),
                            "\(first)")
                    app.close()
                }
            }
        }
    }
}
