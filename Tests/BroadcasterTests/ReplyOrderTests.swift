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
