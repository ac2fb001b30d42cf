import Broadcaster
import Foundation
import MoonRunnerTestSupport
import Testing

/// `moonrunner serve`'s log as an operator reads it: each connection can be followed by its id.
@Suite(.mayBlock) struct ServeLogTests {
    /// One log line about a connection: `connect #3 127.0.0.1:5000 http`, `move #3 …`, `disconnect #3 …: why`.
    struct Entry {
        let verb: String
        let id: String
        let line: String
    }

    /// The connection lines of a log, in order (the timestamp is the first word of every line).
    static func entries(_ log: String) -> [Entry] {
        log.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 3, ["connect", "move", "disconnect"].contains(words[1]), words[2].hasPrefix("#") else {
                return nil
            }
            return Entry(verb: String(words[1]), id: String(words[2]), line: String(line))
        }
    }

    /// Line and HTTP connections, one of them moved to the loop that owns its runner: every one has a
    /// `connect` line first and a `disconnect` line last, under the one id it keeps throughout.
    @Test func everyConnectionIsLoggedFromConnectToDisconnectUnderOneID() throws {
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", ":memory:", "--loops", "2"])
        let port = try server.listeningPort(), httpPort = try server.httpPort()
        // Two runners of the same loop on two connections accepted one after the other, so dealt to different
        // loops: one of the two connections moves.
        let names = (0..<64).map { "runner\($0)" }
        let owner = ServerGroup.loopIndex(ofRunner: names[0], loops: 2)
        let sameLoop = try #require(names.dropFirst().first { ServerGroup.loopIndex(ofRunner: $0, loops: 2) == owner })
        let first = try TestClient(port: port), second = try TestClient(port: port)
        for (client, name) in [(first, names[0]), (second, sameLoop)] {
            try client.send("iam:\(name)")
            try client.expectNext("ok:iam")
            try client.send("quit:")
            _ = try client.awaitClose()
        }
        // HTTP closed by the server (no keep-alive), and HTTP closed by the browser.
        let once = try HTTPTestClient(port: httpPort)
        #expect(try once.get("/api/badges", headers: "Connection: close\r\n").status == 200)
        #expect(try once.awaitClose())
        let kept = try HTTPTestClient(port: httpPort)
        #expect(try kept.get("/healthz").status == 200)
        kept.close()
        server.terminate()
        #expect(server.awaitExit() == 0)

        let entries = Self.entries(server.standardError)
        let connects = entries.filter { $0.verb == "connect" }
        #expect(connects.count == 4, "\(server.standardError)")
        #expect(connects.filter { $0.line.hasSuffix(" http") }.count == 2, "HTTP connections say so")
        #expect(entries.filter { $0.verb == "move" }.count == 1, "the premise: one connection moved")
        for connect in connects {
            let own = entries.filter { $0.id == connect.id }
            #expect(own.first?.verb == "connect" && own.last?.verb == "disconnect", "\(own.map(\.line))")
            #expect(own.filter { $0.verb == "connect" || $0.verb == "disconnect" }.count == 2, "\(own.map(\.line))")
        }
        for disconnect in entries where disconnect.verb == "disconnect" {
            #expect(connects.contains { $0.id == disconnect.id }, "no connect line for \(disconnect.line)")
        }
        #expect(entries.contains { $0.verb == "disconnect" && $0.line.contains("http: 200") })
    }
}
