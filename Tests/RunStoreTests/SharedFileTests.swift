import Foundation
import RunCore
@testable import RunStore
import MoonRunnerTestSupport
import Testing

/// Two stores on one file stand for two processes (a live server and `moonrunner import`): each has its own
/// connections, and nothing but the database coordinates them.
@Suite(.mayBlock) struct SharedFileTests {
    @Test func twoStoresOnOneFileNeverShareARunID() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let server = try SQLiteRunStore(path: path)
        let importer = try SQLiteRunStore(path: path)
        var ids: [Int64] = []
        // Interleaved, as a server starting runs while an import runs next to it.
        for _ in 0..<40 {
            ids.append(try server.allocateRunID())
            ids.append(try importer.allocateRunID())
        }
        #expect(Set(ids).count == ids.count)
        importer.close()
        server.close()
    }

    @Test func runsWrittenByTwoStoresStayIntact() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let server = try SQLiteRunStore(path: path)
        defer { server.close() }
        let importer = try SQLiteRunStore(path: path)
        server.submit(.runner(name: "ann", keyHash: "a", created: 1))
        importer.submit(.runner(name: "imp", keyHash: "i", created: 1))
        let live = try server.allocateRunID()
        let imported = try importer.allocateRunID()
        server.submit(.runStarted(id: live, runner: "ann", started: 100))
        importer.submit(.runStarted(id: imported, runner: "imp", started: 200))
        importer.submit(.fix(Sample.fix(run: imported, sequence: 1), acknowledgement: nil))
        server.submit(.fix(Sample.fix(run: live, sequence: 1), acknowledgement: nil))
        server.flush()
        importer.flush()
        importer.close()
        // A run the server starts after the import finished still gets a fresh id.
        let later = try server.allocateRunID()
        server.submit(.runStarted(id: later, runner: "ann", started: 300))
        server.flush()
        #expect(Set([live, imported, later]).count == 3)
        #expect(try server.run(id: live)?.record.runner == "ann")
        #expect(try server.run(id: imported)?.record.runner == "imp")
        #expect(try server.run(id: later)?.record.started == 300)
        #expect(try server.runs(of: "imp", offset: 0, limit: 10).map(\.id) == [imported])
        #expect(try server.runs(of: "ann", offset: 0, limit: 10).map(\.id) == [later, live])
    }

    @Test func idsLeftUnusedAtCloseAreGivenBack() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("ids.sqlite")
        var configuration = StoreConfiguration()
        configuration.runIDBlockSize = 8
        let first = try SQLiteRunStore(path: path, configuration: configuration)
        let a = try first.allocateRunID()
        let b = try first.allocateRunID()  // a block of 2 is now reserved, the next would be 4
        let c = try first.allocateRunID()
        first.close()
        let second = try SQLiteRunStore(path: path, configuration: configuration)
        defer { second.close() }
        #expect([a, b, c] == [1, 2, 3])
        #expect(try second.allocateRunID() == c + 1)
    }

    @Test(arguments: StoreKind.allCases)
    func savedHistoriesMergeInsteadOfReplacing(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        store.submit(.runner(name: "ann", keyHash: "a", created: 1))
        // The server's view: Moon earned at t=10 (reference 3 m/s), silver at 20.
        let server = BadgeHistory(records: [
            "moon": .init(earnedAt: 10, referenceSpeed: 3, silverAt: 20, bestSpeed: 3.2),
        ])
        // An import's view, written meanwhile: Moon earned earlier, gold later, and Mars too.
        let imported = BadgeHistory(records: [
            "moon": .init(earnedAt: 5, referenceSpeed: 2.5, goldAt: 30, bestSpeed: 3.1),
            "mars": .init(earnedAt: 6, referenceSpeed: 2.8, bestSpeed: 2.8),
        ])
        store.submit(.history(runner: "ann", imported))
        store.submit(.history(runner: "ann", server))
        store.flush()
        let saved = try #require(try store.runner(named: "ann")).history
        #expect(saved == server.merged(with: imported))
        #expect(saved.records["moon"] == .init(earnedAt: 5, referenceSpeed: 2.5, silverAt: 20, goldAt: 30, bestSpeed: 3.2))
        #expect(saved.records["mars"]?.earnedAt == 6)
    }

    @Test func aFileMigratedByANewerBuildIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("newer.sqlite")
        try SQLiteRunStore(path: path).close()
        do {
            let database = try Database(path: path, busyTimeout: 1)
            try database.execute("INSERT INTO schema_migrations (id, applied_at) VALUES ('2099-01-001-future', 0)")
        }
        #expect {
            try SQLiteRunStore(path: path)
        } throws: { error in
            "\(error)".contains("newer moonrunner") && "\(error)".contains("2099-01-001-future")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theFarthestRunIsOneQuery(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        store.submit(.runner(name: "ann", keyHash: "a", created: 1))
        for (distance, status) in [(5000.0, RunStatus.saved), (9000, .discarded), (7000, .timedOut), (3000, .saved)] {
            let id = try store.allocateRunID()
            store.submit(.runFinished(RunRecord(id: id, runner: "ann", started: 100 + Double(id), distance: distance,
                                                status: status), splits: [], checkpoints: []))
        }
        store.flush()
        #expect(try store.farthestDistance(of: "ann") == 7000, "discarded runs do not count")
        #expect(try store.farthestDistance(of: "nobody") == 0)
    }

    @Test func aSlowHistoryReadDoesNotHoldUpARunnerLookup() throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteRunStore(path: directory.path("lookups.sqlite"))
        defer { store.close() }
        store.submit(.runner(name: "ann", keyHash: "a", created: 1))
        store.flush()
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? store.reader.read { _ throws(StoreError) in
                holding.signal()
                release.wait()  // a history read that takes its time
            }
        }
        holding.wait()
        defer { release.signal() }
        // The loop's lookup has its own connection: it answers while the history read holds the reader.
        #expect(try store.runner(named: "ann")?.keyHash == "a")
    }
}
