@testable import Broadcaster
import Foundation
import MoonRunnerTestSupport
import Testing

/// The output budget covers requests not yet whole too: a phone app's body may be a MiB, and many connections
/// each sending most of one and then nothing must not add up past the budget.
@Suite(.mayBlock) struct MemoryBudgetTests {
    /// What the server holds for its clients once it is at most `budget`, or after 10 s (the budget is checked
    /// once a second: a loop round trip at a time until then).
    static func heldBytes(of server: Server, awaiting budget: Int) throws -> Int {
        let deadline = Date().addingTimeInterval(10)
        var held = server.pendingOutputBytes()
        while held > budget, Date() < deadline {
            try settleLoop(of: server)
            held = server.pendingOutputBytes()
        }
        return held
    }

    @Test func halfSentBodiesAreShedOldestFirstOnceTheyPassTheBudget() throws {
        let budget = 4 * 1024 * 1024
        try withServer({ $0.outputBudget = budget }) { server in
            let http = try #require(server.httpPort)
            var slow: [HTTPTestClient] = []
            let chunk = String(repeating: "x", count: 900 * 1024)
            for _ in 0..<12 {
                let client = try HTTPTestClient(port: http)
                try client.send("POST /owntracks HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                + "Content-Length: 1000000\r\n\r\n" + chunk)
                slow.append(client)
            }
            // 12 × 900 KiB is over 4 MiB: within a tick or two of the budget check it fits again.
            let held = try Self.heldBytes(of: server, awaiting: budget)
            #expect(held <= budget, "\(held) bytes held")
            #expect(try slow[0].awaitClose(), "the oldest half-sent request goes first")
            #expect(try HTTPTestClient(port: http).get("/healthz").status == 200, "everyone else is served")
        }
    }
}
