import Foundation
import MoonRunnerTestSupport
import PostgresRunStore
import RunCore
import Testing
@testable import RunStore

/// What only the PostgreSQL store has to show (the shared contract is in StoreContractTests): a schema from a
/// newer build refused, two nodes sharing one database, and a server outage that acks nothing uncommitted.
@Suite(.mayBlock, .enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresStoreTests {
    @Test func aSchemaNewerThanThisBuildIsRefused() throws {
        let url = try PostgresTestServer.shared().createDatabase()
        let first = try PostgresRunStore(url: url)
        first.submit(.runner(name: "ann", keyHash: "a", created: 1))
        first.close()
        // Opening again migrates nothing and keeps the data.
        let again = try PostgresRunStore(url: url)
        #expect(try again.runner(named: "ann")?.keyHash == "a")
        again.close()
        try PostgresConnection(url: url).query(
            "INSERT INTO schema_migrations (id, applied_at) VALUES ($1, 0)", ["2099-01-001-future"])
        #expect {
            try PostgresRunStore(url: url)
        } throws: { error in
            "\(error)".contains("newer moonrunner") && "\(error)".contains("2099-01-001-future")
        }
    }

    /// A close right after an id asked the refill thread for the next block hung for ever: the thread saw the
    /// close first and waited for its own fetch to end.
    @Test func closingRightAfterARefillWasAskedForEnds() throws {
        let url = try PostgresTestServer.shared().createDatabase()
        var configuration = StoreConfiguration()
        configuration.runIDBlockSize = 2
        for _ in 0..<30 {
            let store = try PostgresRunStore(url: url, configuration: configuration)
            _ = try store.allocateRunID()  // one of two left: the refill is asked for
            store.close()
        }
    }

    @Test func aServerThatIsNotThereIsAClearErrorAtOpen() throws {
        // A port nothing listens on; the password must not show in the message.
        let url = "postgres://moonrunner:secret@127.0.0.1:1/postgres?connect_timeout=2"
        #expect {
            try PostgresRunStore(url: url)
        } throws: { error in
            let text = "\(error)"
            return text.contains("cannot be reached") && text.contains("127.0.0.1:1") && !text.contains("secret")
                && (error as? StoreError)?.isTransient == true
        }
    }

    @Test func twoNodesSharingADatabaseNeverShareAnIDANameOrAFix() async throws {
        let url = try PostgresTestServer.shared().createDatabase()
        // Both open (and migrate) at once: the advisory lock lets one migrate and the other find it done.
        async let openedA = Task.detached { try PostgresRunStore(url: url) }.value
        async let openedB = Task.detached { try PostgresRunStore(url: url) }.value
        let (a, b) = try await (openedA, openedB)
        defer {
            a.close()
            b.close()
        }
        let ids = await withTaskGroup(of: [Int64].self) { group in
            for store in [a, b, a, b] { group.addTask { (0..<100).map { _ in try! store.allocateRunID() } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(ids).count == 400)

        // Both claim one name with different keys: one insert wins, and both nodes read the same owner.
        a.submit(.runner(name: "ann", keyHash: "key-a", created: 1))
        b.submit(.runner(name: "ann", keyHash: "key-b", created: 2))
        a.flush()
        b.flush()
        let owner = try #require(try a.runner(named: "ann"))
        #expect(["key-a", "key-b"].contains(owner.keyHash))
        #expect(try b.runner(named: "ann") == owner)

        // A run continued on another node, whose client resent fixes the first had stored: each stored once.
        let run = try a.allocateRunID()
        a.submit(.runStarted(id: run, runner: "ann", started: 1_700_000_000))
        for sequence in 1...10 { a.submit(.fix(Sample.fix(run: run, sequence: Int64(sequence)), acknowledgement: nil)) }
        a.flush()
        b.submit(.runStarted(id: run, runner: "ann", started: 1_700_000_000))
        for sequence in 6...15 { b.submit(.fix(Sample.fix(run: run, sequence: Int64(sequence)), acknowledgement: nil)) }
        b.flush()
        #expect(try a.fixes(ofRun: run) == (1...15).map { Sample.fix(run: run, sequence: Int64($0)) })
        #expect(try b.liveRuns().map(\.id) == [run])
    }

    @Test func anOutageAcksNothingUncommittedAndWritingResumesAfterIt() throws {
        let server = try PostgresTestServer.start()
        defer { server.remove() }
        var configuration = StoreConfiguration()
        configuration.retainedRetryInterval = 0.2
        let store = try PostgresRunStore(url: server.adminURL, configuration: configuration)
        defer { store.close() }
        let receipts = ReceiptWaiter()
        store.setCommitHandler { receipts.append($0) }
        let run = try store.allocateRunID()
        store.submit(.runner(name: "ann", keyHash: "a", created: 1))
        store.submit(.runStarted(id: run, runner: "ann", started: 1_700_000_000))
        for sequence in 1...10 {
            store.submit(.fix(Sample.fix(run: run, sequence: Int64(sequence)), acknowledgement: "\(sequence)"))
        }
        store.flush()
        #expect(receipts.all.last?.acknowledgements[run] == "10")

        try server.stop()
        let before = receipts.all.count
        for sequence in 11...20 {
            store.submit(.fix(Sample.fix(run: run, sequence: Int64(sequence)), acknowledgement: "\(sequence)"))
        }
        // The writer tried, failed, kept the fixes, and tried again later: still nothing to ack.
        try receipts.await("two failed batches") { $0.dropFirst(before).filter { $0.failure != nil }.count >= 2 }
        let during = Array(receipts.all.dropFirst(before))
        #expect(during.allSatisfy { $0.acknowledgements.isEmpty })
        #expect(during.allSatisfy { $0.failure?.isTransient == true && $0.affectedRuns == [run] })
        #expect(store.retainedWriteCount == 10)
        #expect(throws: StoreError.self) { try store.fixes(ofRun: run) }

        try server.startServer()
        try receipts.await("the ack of fix 20") { $0.contains { $0.acknowledgements[run] == "20" } }
        #expect(store.retainedWriteCount == 0)
        #expect(try store.fixes(ofRun: run) == (1...20).map { Sample.fix(run: run, sequence: Int64($0)) })
        #expect(try store.runner(named: "ann")?.keyHash == "a")
        #expect(try store.allocateRunID() > run)
    }
}

/// Receipts from the writer thread, with a wait for the one a test expects.
final class ReceiptWaiter: @unchecked Sendable {
    private let condition = NSCondition()
    private var receipts: [CommitReceipt] = []  // guarded by `condition`

    func append(_ receipt: CommitReceipt) {
        condition.lock()
        receipts.append(receipt)
        condition.broadcast()
        condition.unlock()
    }

    var all: [CommitReceipt] {
        condition.lock()
        defer { condition.unlock() }
        return receipts
    }

    /// Waits until `predicate` holds for the receipts so far (at most `timeout` seconds).
    func await(_ what: String, timeout: Double = 30, _ predicate: ([CommitReceipt]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(receipts) {
            guard condition.wait(until: deadline) else {
                throw PostgresTestServer.Failure(description: "timed out waiting for \(what); \(receipts.count) receipts")
            }
        }
    }
}
