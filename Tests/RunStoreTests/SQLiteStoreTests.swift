import CSQLite
import Foundation
import RunCore
import MoonRunnerTestSupport
import Testing
@testable import RunStore

/// What only the SQLite store does: migrations, persistence, and failing clearly at open and while writing.
@Suite(.mayBlock) struct SQLiteStoreTests {
    @Test func migrationsApplyOnceAndDataPersists() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        do {
            let database = try Database(path: path, busyTimeout: 1)
            #expect(try database.migrate() == Migration.all.map(\.id))
            #expect(try database.migrate().isEmpty)
        }
        let store = try SQLiteRunStore(path: path)
        let first = try store.allocateRunID()
        let second = try store.allocateRunID()
        #expect(second == first + 1)
        store.submit(.runner(name: "ada", keyHash: "h", created: 1))
        store.submit(.runStarted(id: second, runner: "ada", started: 10))
        store.submit(.fix(Sample.fix(run: second, sequence: 1), acknowledgement: nil))
        store.close()
        // Closing folds the WAL back into the file: the database is one self-contained file again.
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)

        // Reopening applies nothing twice, keeps the data, and continues run ids after the largest stored one.
        let reopened = try SQLiteRunStore(path: path)
        defer { reopened.close() }
        #expect(try reopened.allocateRunID() == second + 1)
        #expect(try reopened.runner(named: "ada")?.keyHash == "h")
        #expect(try reopened.fixes(ofRun: second) == [Sample.fix(run: second, sequence: 1)])
        let check = try Database(path: path, busyTimeout: 1)
        #expect(try check.appliedMigrations() == Migration.all.map(\.id))
        #expect(try check.text("PRAGMA journal_mode") == "wal")
    }

    /// Tokens made before labels existed keep working, without a label, once the file is migrated.
    @Test func deviceTokensFromBeforeLabelsReadBackWithoutOne() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        do {
            let database = try Database(path: path, busyTimeout: 1)
            try database.migrate(Migration.all.filter { $0.id != "2027-01-010-device-labels" })
            try database.execute("INSERT INTO runners (name, key_hash, created) VALUES ('ada', 'h', 1)")
            try database.execute("INSERT INTO device_tokens (token_hash, runner, created) VALUES ('\(RunnerKey.hash("t1"))', 'ada', 5)")
            #expect(try database.migrate() == ["2027-01-010-device-labels"])
        }
        let store = try SQLiteRunStore(path: path)
        #expect(try store.deviceTokens() == [DeviceToken(hash: RunnerKey.hash("t1"), runner: "ada", created: 5)])
        let labelled = DeviceToken(hash: RunnerKey.hash("t2"), runner: "ada", created: 6, label: "Ada's watch")
        store.submit(.device(labelled))
        store.close()
        let reopened = try SQLiteRunStore(path: path)
        defer { reopened.close() }
        #expect(try reopened.deviceTokens().last == labelled)
    }

    @Test func runsFromBeforeElevationReadBackWithoutAndTheViewShowsAltitudes() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        do {
            let database = try Database(path: path, busyTimeout: 1)
            try database.migrate(Migration.all.filter { $0.id != "2027-01-027-elevation" })
            try database.execute("INSERT INTO runners (name, key_hash, created) VALUES ('ada', 'h', 1)")
            try database.execute("INSERT INTO runs (id, runner, started, status) VALUES (7, 'ada', 5, 'saved')")
            #expect(try database.migrate() == ["2027-01-027-elevation"])
        }
        let store = try SQLiteRunStore(path: path)
        #expect(try store.run(id: 7)?.record.elevationGain == nil)
        var fix = Sample.fix(run: 7, sequence: 1)
        fix.fix.altitude = 12.5
        store.submit(.fix(fix, acknowledgement: nil))
        store.submit(.fix(Sample.fix(run: 7, sequence: 2), acknowledgement: nil))
        store.close()
        let database = try Database(path: path, busyTimeout: 1)
        let select = try database.prepare("SELECT altitude FROM fixes WHERE run = 7 ORDER BY sequence")
        var altitudes: [Double?] = []
        while try select.step() { altitudes.append(select.optionalDouble(at: 0)) }
        #expect(altitudes == [12.5, nil])
    }

    @Test func garbageFileFailsAtOpen() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("garbage.sqlite")
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<8192).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: path) }
        #expect(error?.sqlitePrimaryCode == SQLITE_NOTADB)
        #expect(error?.message.contains("not an SQLite database or is corrupt") == true)
    }

    @Test func damagedDatabaseFailsAtOpen() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("damaged.sqlite")
        let store = try SQLiteRunStore(path: path)
        for sequence in 1...2000 { store.submit(.fix(Sample.fix(run: 1, sequence: Int64(sequence)), acknowledgement: nil)) }
        store.close()
        // Overwrite the pages after the first (the schema stays readable, the tables do not).
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096 * 8))
        try handle.close()
        let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: path) }
        #expect(error?.kind == .corrupt)
    }

    @Test func missingDirectoryFailsAtOpen() {
        let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: "/nonexistent-\(UUID())/runs.sqlite") }
        #expect(error?.sqlitePrimaryCode == SQLITE_CANTOPEN)
    }

    @Test func inMemoryPathIsRefused() {
        let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: ":memory:") }
        #expect(error?.message.contains("MemoryRunStore") == true)
    }

    /// Root ignores permission bits, so `chmod 0444` alone cannot make a file read-only for these tests when
    /// they run as root (as in CI). SQLite's `mode=ro` URI opens the file the way SQLite itself opens a file it
    /// may not write (it falls back to read-only), so the store meets the same SQLITE_READONLY failure. When
    /// the tests run as an ordinary user, the real `chmod 0444` file is tried as well.
    @Test func readOnlyDatabaseFailsAtOpen() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("readonly.sqlite")
        try SQLiteRunStore(path: path).close()
        let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: "file:\(path)?mode=ro") }
        #expect(error?.sqlitePrimaryCode == SQLITE_READONLY)
        #expect(error?.message.contains("read-only") == true)
        if getuid() != 0 {
            chmod(path, 0o444)
            let chmodError = #expect(throws: StoreError.self) { try SQLiteRunStore(path: path) }
            #expect([.readOnly, .unavailable].contains(chmodError?.kind))
        }
    }

    @Test func exclusivelyLockedDatabaseFailsAtOpenAfterTheBusyTimeout() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("locked.sqlite")
        try SQLiteRunStore(path: path).close()
        let other = try Database(path: path, busyTimeout: 0)
        try other.execute("BEGIN EXCLUSIVE")
        defer { try? other.execute("ROLLBACK") }
        var configuration = StoreConfiguration()
        configuration.busyTimeout = 0.2
        let started = Date()
        let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: path, configuration: configuration) }
        #expect(error?.sqlitePrimaryCode == SQLITE_BUSY)
        #expect(error?.message.contains("locked by another process") == true)
        #expect(Date().timeIntervalSince(started) >= 0.2)
    }

    /// Another connection takes the write lock while the store runs: the batch fails after its retries, the
    /// receipt says so, the writes stay queued, and they commit (with their acknowledgement) once the lock goes.
    @Test func lockedBatchIsReportedKeptAndRetried() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        var configuration = StoreConfiguration()
        configuration.busyTimeout = 0.05
        configuration.retryAttempts = 1
        configuration.retainedRetryInterval = 60  // the retry below is driven by a new write, not the timer
        let store = try SQLiteRunStore(path: path, configuration: configuration)
        defer { store.close() }
        let log = ReceiptLog()
        store.setCommitHandler { log.append($0) }
        let other = try Database(path: path, busyTimeout: 0)
        try other.execute("BEGIN IMMEDIATE")
        store.submit(.runStarted(id: 7, runner: "ada", started: 1))
        store.submit(.fix(Sample.fix(run: 7, sequence: 1), acknowledgement: "t1"))
        store.flush()
        let failed = try #require(log.all.last)
        #expect(failed.failure?.kind == .busy)
        #expect(failed.affectedRuns == [7])
        #expect(failed.acknowledgements.isEmpty)
        #expect(store.retainedWriteCount == 2)
        #expect(try store.fixes(ofRun: 7).isEmpty)

        try other.execute("COMMIT")
        store.submit(.fix(Sample.fix(run: 8, sequence: 1), acknowledgement: "u1"))
        store.flush()
        let recovered = try #require(log.all.last)
        #expect(recovered.failure == nil)
        #expect(recovered.acknowledgements == [7: "t1", 8: "u1"])
        #expect(store.retainedWriteCount == 0)
        #expect(try store.fixes(ofRun: 7).count == 1)
        #expect(try store.liveRuns().map(\.id) == [7])
    }

    /// A size cap (`max_page_count`) fails writes with SQLITE_FULL exactly as a full disk does.
    @Test func fullDatabaseIsReportedAndNothingIsLostSilently() throws {
        let directory = TemporaryDirectory()
        var configuration = StoreConfiguration()
        configuration.maximumPageCount = 40
        configuration.retryAttempts = 1
        configuration.retainedRetryInterval = 60
        configuration.maximumBatchSize = 100_000
        configuration.maximumBatchDelay = 10  // one batch of everything: flush cuts the wait short
        let store = try SQLiteRunStore(path: directory.path("full.sqlite"), configuration: configuration)
        defer { store.close() }
        let log = ReceiptLog()
        store.setCommitHandler { log.append($0) }
        for sequence in 1...20_000 {
            store.submit(.fix(Sample.fix(run: 3, sequence: Int64(sequence)), acknowledgement: "\(sequence)"))
        }
        store.flush()
        let receipt = try #require(log.all.last)
        #expect(receipt.failure?.kind == .full && receipt.failure?.sqlitePrimaryCode == SQLITE_FULL)
        #expect(receipt.affectedRuns == [3])
        #expect(store.retainedWriteCount == 20_000)
        #expect(try store.fixes(ofRun: 3).isEmpty)  // the failed batch was rolled back as a whole
    }

    @Test func aBindThatFailsIsTheStoresErrorNotSilence() throws {
        let directory = TemporaryDirectory()
        let database = try Database(path: directory.path("bind.sqlite"), busyTimeout: 1)
        let statement = try database.prepare("SELECT ?1")
        try statement.bind(Int64(1), at: 1)
        #expect {
            try statement.bind("x", at: 2)  // there is no parameter 2
        } throws: { error in
            "\(error)".contains("binding parameter 2")
        }
    }
}
