import Foundation
import MoonRunnerTestSupport
import PostgresRunStore
import RunStore
import Testing
import Wire

/// `moonrunner serve --db postgres://…` over the wire: a runner's fixes acked after PostgreSQL committed them,
/// and the history answered from PostgreSQL, by this server and by a second one on the same database.
@Suite(.mayBlock, .enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresServeTests {
    @Test func fixesGoToPostgreSQLAndTheHistoryComesBackFromIt() throws {
        let url = try PostgresTestServer.shared().createDatabase()
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", url])
        defer { if server.isRunning { server.signal(SIGKILL) } }
        let port = try server.listeningPort()
        let runner = try TestClient(port: port)
        try runner.send("iam:ann")
        try runner.expectNext("ok:iam")
        let fixes = straightRun(count: 30)
        for line in fixes { try runner.send(line) }
        let lastStamp = fixes.last!.split(separator: ",").last!
        try runner.lines(until: "the ack of the last fix", timeout: 15) { $0 == "ack:ann ts=\(lastStamp)" }
        try runner.send("stop:")
        let end = try RunEndedEvent(event: Event.parse(runner.expect("end:ann")))
        #expect(end.saved)

        let asker = try TestClient(port: port)
        try askHistory(asker, runID: end.runID)
        server.terminate()
        #expect(server.awaitExit() == 0)

        let store = try PostgresRunStore(url: url)
        let run = try #require(try store.run(id: end.runID))
        #expect(run.record.status == .saved)
        #expect(abs(run.record.distance - end.distance) < 0.01)
        #expect(try store.fixes(ofRun: end.runID).count == 30)
        store.close()

        // Another server on the same database (another node, or this one restarted) knows the runner and run.
        let second = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", url])
        defer { if second.isRunning { second.signal(SIGKILL) } }
        try askHistory(TestClient(port: second.listeningPort()), runID: end.runID)
        second.terminate()
        #expect(second.awaitExit() == 0)
    }

    @Test func anUnreachableDatabaseIsAClearErrorAtStartWithoutThePassword() throws {
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0",
                                       "--db", "postgres://ann:hunter2@127.0.0.1:1/runs?connect_timeout=2"])
        #expect(server.awaitExit() == 1)
        #expect(server.standardError.contains("cannot open the database postgres://ann:***@127.0.0.1:1/runs"))
        #expect(!server.standardError.contains("hunter2"))
    }

    /// `runs:ann` lists the run saved, and `run:ID` shows it, from the store.
    private func askHistory(_ asker: TestClient, runID: Int64) throws {
        try asker.send("runs:ann")
        let item = try asker.expect("item:ann")
        #expect(item.contains(" run=\(runID) "))
        try asker.expectNext("done:runs count=1 more=no")
        try asker.send("run:\(runID)")
        let summary = try asker.expect("summary:ann")
        #expect(summary.contains(" run=\(runID) ") && summary.contains(" status=saved "))
        try asker.lines(until: "done:run") { $0.hasPrefix("done:run ") }
    }
}
