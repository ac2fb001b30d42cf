import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// protocol.md §1: replies to one connection's commands go out in command order, history answers included,
/// and `quit:` closes only after every earlier answer was written.
@Suite(.mayBlock) struct ReplyOrderTests {
    @Test func aHistoryAnswerIsNeitherOvertakenNorLostToQuit() throws {
        let store = GatedStore()
        try withServer(store: store) { server in
            let (ann, _) = try connectRunner("ann", to: server)
            try ann.send("quit:")
            _ = try ann.awaitClose()
            let script = try TestClient(port: server.port)
            // One write, as `printf 'runs:ann\nping:\nquit:\n' | nc` sends it.
            try script.write(Array("runs:ann\nping:\nquit:\n".utf8))
            try settleLoop(of: server)
            store.open()
            let lines = try script.awaitClose(timeout: 10)
            #expect(lines == ["done:runs count=0 more=no", "ok:ping", "ok:quit"])
        }
    }

    @Test func laterRepliesWaitForAnEarlierAnswer() throws {
        let store = GatedStore()
        try withServer(store: store) { server in
            let asker = try TestClient(port: server.port)
            try asker.write(Array("run:7\nping:\nrun:8\nhelp:\n".utf8))
            try settleLoop(of: server)
            store.open(times: 2)
            let lines = try asker.lines(until: "done:help", timeout: 10) { $0.hasPrefix("done:help") }
            let kinds = lines.map { $0.prefix { $0 != " " } }
            #expect(kinds.prefix(3) == ["err:not_found", "ok:ping", "err:not_found"])
            #expect(kinds.dropFirst(3).allSatisfy { $0.hasPrefix("help:") || $0.hasPrefix("done:help") })
        }
    }

    /// A name the server does not know is looked up in the store off the loop: the asking connection waits
    /// (its replies stay in order), nobody else does. On the loop, a slow store (a PostgreSQL server a round
    /// trip away, a locked SQLite file) stalled every connection of the loop.
    @Test func aNameLookupHoldsOnlyTheConnectionThatAsked() throws {
        let store = GatedStore(gatingRunners: true)
        try withServer(store: store) { server in
            defer { store.open(times: 8) }  // whatever happens, nothing stays blocked at the gate
            let newcomer = try TestClient(port: server.port)
            try newcomer.write(Array("iam:zoe\nping:\n".utf8))  // zoe: a name this server has not seen
            let other = try TestClient(port: server.port)
            try other.send("ping:")
            try other.expectNext("ok:ping")
            try other.send("runs:nobody")
            store.open(times: 2)
            try other.expectNext("err:not_found")
            let lines = try newcomer.lines(until: "ok:ping", timeout: 10) { $0 == "ok:ping" }
            #expect(lines.count == 2 && lines[0].hasPrefix("ok:iam name=zoe key="), "\(lines)")
            // Known now: the gate is shut, and the answer needs no lookup.
            try other.send("iam:zoe")
            try other.expectNext("err:wrong_key")
        }
    }

    /// Reads queued off a loop are bounded: past the cap a history command is told `err:busy` at once and an
    /// API request gets 503, nothing waits or piles up, and once reads are answered history works again.
    @Test func historyReadsPastTheLoopsCapAreRefusedAtOnce() throws {
        // Waits are long: the server's reads and commit replies run on libdispatch's workers, which the suites
        // running beside this one (their gated stores hold workers blocked) can keep busy for many seconds on
        // 2 cores (this test took 24-32 s within the whole suite, 0.05 s alone).
        let wait = 30.0
        let store = GatedStore()
        // One loop whatever MOONRUNNER_TEST_LOOPS says: the cap is a loop's, and with several the three
        // connections would be shared out among them.
        var configuration = ServerConfiguration()
        (configuration.port, configuration.httpPort, configuration.maximumQueuedReads) = (0, 0, 2)
        let server = try Server(configuration: configuration, store: store, log: ServerLog(isEnabled: false))
        try server.start()
        defer { server.shutdown() }
        do {
            defer { store.open(times: 8) }
            let (ann, _) = try connectRunner("ann", to: server, timeout: wait)
            let first = try TestClient(port: server.port), second = try TestClient(port: server.port)
            for client in [first, second] { try client.send("runs:ann") }  // both held at the gate
            try settleLoop(of: server)
            let third = try TestClient(port: server.port)
            try third.send("runs:ann")
            try third.expectNext("err:busy", timeout: wait)
            let web = try HTTPTestClient(port: try #require(server.httpPort))
            #expect(try web.get("/api/runners/ann/runs").status == 503)
            try ann.send("ping:")
            try ann.expectNext("ok:ping", timeout: wait)  // everyone else goes on
            store.open(times: 2)
            for client in [first, second] { try client.expect("done:runs", timeout: wait) }
            try third.send("runs:ann")
            store.open()
            try third.expect("done:runs", timeout: wait)
        }
    }

    @Test func pushedEventsStillFlowWhileAnAnswerIsPending() throws {
        let store = GatedStore()
        try withServer(store: store) { server in
            let (ann, _) = try connectRunner("ann", to: server)
            let fan = try TestClient(port: server.port)
            try fan.send("watch:ann")
            try fan.expectNext("ok:watch")
            try fan.send("runs:ann")  // held at the gate
            for line in straightRun(count: 3) { try ann.send(line) }
            // The fan's own command waits, but the runner it watches is not held up.
            try fan.expect("pace:ann")
            store.open()
            try fan.expect("done:runs")
        }
    }
}
