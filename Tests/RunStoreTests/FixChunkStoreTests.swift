import CSQLite
import Foundation
import MoonRunnerTestSupport
import RunCore
import Testing
@testable import RunStore

/// Fixes stored many to a `fix_chunks` row: they come back as they went in whatever the batching, a resent
/// fix is stored once, and the `fixes` view still shows one row per fix.
@Suite(.mayBlock) struct FixChunkStoreTests {
    /// A fix as a phone sends it (decimal text), received a moment later by a clock with sub-microsecond digits.
    static func fix(run: Int64, sequence: Int64, rejection: FixRejection? = nil, variant: Double = 0) -> StoredFix {
        let time = 1_767_225_600 + Double(sequence)
        let fix = Fix(latitude: Double("51.\(5_000_000 + Int(sequence) * 37)")! + variant,
                      longitude: Double("-0.\(1_200_000 + Int(sequence) * 23)")!,
                      accuracy: 3 + Double(sequence % 9) * 0.5, timestamp: time)
        return StoredFix(runID: run, sequence: sequence, fix: fix, received: time + 0.2 + Double(sequence % 997) * 1.3e-7,
                         rejection: rejection ?? (sequence % 13 == 0 ? .inaccurate : nil))
    }

    /// Compares fixes bit for bit (NaN equal to NaN).
    static func same(_ read: [StoredFix], _ expected: [StoredFix]) -> Bool {
        read.count == expected.count && zip(read, expected).allSatisfy { left, right in
            left.runID == right.runID && left.sequence == right.sequence && left.rejection == right.rejection
                && FixChunkCoding.Fields(left) == FixChunkCoding.Fields(right)
        }
    }

    /// The rows of a run: (first_sequence, count, text length).
    static func chunks(of run: Int64, at path: String) throws -> [(first: Int64, count: Int64, length: Int64)] {
        let database = try Database(path: path, busyTimeout: 1)
        let select = try database.prepare(
            "SELECT first_sequence, count, length(fixes) FROM fix_chunks WHERE run = ?1 ORDER BY first_sequence")
        try select.bind(run, at: 1)
        var rows: [(Int64, Int64, Int64)] = []
        while try select.step() { rows.append((select.int64(at: 0), select.int64(at: 1), select.int64(at: 2))) }
        return rows
    }

    /// Rows cover the run's sequences without overlap, each within the text limit (a single fix may exceed it).
    static func expectWellFormed(run: Int64, at path: String, sequences: [Int64]) throws {
        let rows = try chunks(of: run, at: path)
        let covered = rows.flatMap { row in (0..<row.count).map { row.first + $0 } }
        #expect(covered == sequences)
        let limit = Int64(FixChunkCoding.textLimit(pageSize: 4096))
        for row in rows { #expect(row.length <= limit || row.count == 1) }
    }

    @Test(arguments: [1, 2, 3, 17, 18, 19, 20, 21, 22, 23, 24, 40, 41, 63, 64, 65, 100, 1000, 5000])
    func fixesRoundTripThroughChunks(count: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        for batchSize in [1, 7, 4096] {
            var configuration = StoreConfiguration()
            configuration.maximumBatchSize = batchSize
            let store = try SQLiteRunStore(path: path, configuration: configuration)
            let run = Int64(batchSize)
            let fixes = (1...count).map { Self.fix(run: run, sequence: Int64($0)) }
            // Interleaved with another run's, so every batch holds both.
            for fix in fixes {
                store.submit(.fix(fix, acknowledgement: nil))
                store.submit(.fix(Self.fix(run: run + 10_000, sequence: fix.sequence), acknowledgement: nil))
            }
            store.close()
            let reopened = try SQLiteRunStore(path: path)
            defer { reopened.close() }
            #expect(Self.same(try reopened.fixes(ofRun: run), fixes), "batches of \(batchSize)")
            #expect(try reopened.fixes(ofRun: run + 10_000).count == count)
            try Self.expectWellFormed(run: run, at: path, sequences: fixes.map(\.sequence))
        }
    }

    /// A run at one fix a batch (a runner at 1 Hz) writes a small row a fix, and its small rows are joined
    /// into full ones as they add up: the run ends in full rows, not a row per fix.
    @Test func aRunSendingOneFixABatchEndsUpInFullRows() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        let store = try SQLiteRunStore(path: path)
        let fixes = (1...100).map { Self.fix(run: 1, sequence: Int64($0)) }
        for fix in fixes {
            store.submit(.fix(fix, acknowledgement: nil))
            store.flush()  // one batch per fix
        }
        #expect(Self.same(try store.fixes(ofRun: 1), fixes))
        store.close()
        let rows = try Self.chunks(of: 1, at: path)
        #expect(rows.count <= 25, "\(rows.count) rows for 100 fixes")
        // Only the open group at the end is small rows.
        let full = rows.prefix { $0.count > 1 }
        #expect(full.count >= 5 && full.allSatisfy { $0.count >= 10 }, "\(rows.map(\.count))")
        #expect(full.map(\.count).reduce(0, +) >= 75)
        try Self.expectWellFormed(run: 1, at: path, sequences: fixes.map(\.sequence))
    }

    /// Small rows joined with the fixes of a later batch, across a restart (the writer then knows only the
    /// last row), and with batches of every size in between.
    @Test func batchesOfEverySizeKeepTheRowsWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        var generator = SeededRandom(seed: 3)
        var expected: [StoredFix] = []
        var sequence: Int64 = 1
        for round in 0..<4 {
            let store = try SQLiteRunStore(path: path)
            for _ in 0..<40 {
                let size = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55][Int(generator.next() % 10)]
                let batch = (0..<size).map { Self.fix(run: 6, sequence: sequence + Int64($0)) }
                sequence += Int64(size)
                expected += batch
                for fix in batch { store.submit(.fix(fix, acknowledgement: nil)) }
                store.flush()
            }
            #expect(Self.same(try store.fixes(ofRun: 6), expected), "round \(round)")
            store.close()
        }
        try Self.expectWellFormed(run: 6, at: path, sequences: expected.map(\.sequence))
        let rows = try Self.chunks(of: 6, at: path)
        #expect(rows.count * 8 <= expected.count, "\(rows.count) rows for \(expected.count) fixes")
    }

    @Test func aResentSequenceIsStoredOnceAcrossChunkBoundariesAndReopens() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        var fixes = (1...120).map { Self.fix(run: 5, sequence: Int64($0)) }
        do {
            let store = try SQLiteRunStore(path: path)
            for fix in fixes { store.submit(.fix(fix, acknowledgement: nil)) }
            store.flush()
            // Resent with the same content, straddling the boundaries between rows.
            let rows = try Self.chunks(of: 5, at: path)
            #expect(rows.count > 3)
            let boundary = rows[1].first
            for sequence in (boundary - 3)...(boundary + 3) {
                store.submit(.fix(fixes[Int(sequence) - 1], acknowledgement: nil))
            }
            store.close()
        }
        do {
            // After a restart: the same sequences again, one of them changed (the later write wins), plus new ones
            // in the same batch.
            let store = try SQLiteRunStore(path: path)
            let changed = Self.fix(run: 5, sequence: 60, rejection: .jump, variant: 0.001)
            fixes[59] = changed
            for sequence in 55...65 { store.submit(.fix(fixes[sequence - 1], acknowledgement: nil)) }
            let more = (121...130).map { Self.fix(run: 5, sequence: Int64($0)) }
            for fix in more { store.submit(.fix(fix, acknowledgement: nil)) }
            fixes += more
            store.flush()
            #expect(Self.same(try store.fixes(ofRun: 5), fixes))
            // Everything resent again in one batch, in reverse: nothing doubles.
            for fix in fixes.reversed() { store.submit(.fix(fix, acknowledgement: nil)) }
            store.close()
        }
        let reopened = try SQLiteRunStore(path: path)
        defer { reopened.close() }
        #expect(Self.same(try reopened.fixes(ofRun: 5), fixes))
        try Self.expectWellFormed(run: 5, at: path, sequences: Array(1...130))
    }

    @Test func fixesOutOfOrderWithGapsAndDuplicatesInOneBatch() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        var configuration = StoreConfiguration()
        configuration.maximumBatchDelay = 5  // one batch; flush cuts the wait short
        let store = try SQLiteRunStore(path: path, configuration: configuration)
        let sequences: [Int64] = [10, 3, 4, 5, 40, 41, 1, 2, 3, 100, 99, 6]
        var latest: [Int64: StoredFix] = [:]
        for (index, sequence) in sequences.enumerated() {
            let fix = Self.fix(run: 2, sequence: sequence, variant: Double(index) * 1e-6)
            latest[sequence] = fix
            store.submit(.fix(fix, acknowledgement: nil))
        }
        store.flush()
        let expected = latest.keys.sorted().map { latest[$0]! }
        #expect(Self.same(try store.fixes(ofRun: 2), expected))
        // Filling a gap later joins nothing up wrongly.
        for sequence in Int64(7)...9 {
            let fix = Self.fix(run: 2, sequence: sequence)
            latest[sequence] = fix
            store.submit(.fix(fix, acknowledgement: nil))
        }
        store.close()
        let reopened = try SQLiteRunStore(path: path)
        defer { reopened.close() }
        #expect(Self.same(try reopened.fixes(ofRun: 2), latest.keys.sorted().map { latest[$0]! }))
        try Self.expectWellFormed(run: 2, at: path, sequences: latest.keys.sorted())
    }

    /// A live run survives a restart: its fixes read back, and the fixes after the restart continue its rows.
    @Test func aLiveRunRecoversAfterReopenAndGoesOn() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        let first = (1...45).map { Self.fix(run: 8, sequence: Int64($0)) }
        do {
            let store = try SQLiteRunStore(path: path)
            store.submit(.runner(name: "ann", keyHash: "h", created: 1))
            store.submit(.runStarted(id: 8, runner: "ann", started: first[0].fix.timestamp))
            for fix in first { store.submit(.fix(fix, acknowledgement: nil)) }
            store.close()  // the server stops without ending the run (a crash leaves the same)
        }
        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        #expect(try store.liveRuns().map(\.id) == [8])
        let recovered = try store.fixes(ofRun: 8)
        #expect(Self.same(recovered, first))
        let next = try #require(recovered.last).sequence + 1
        let second = (next..<next + 30).map { Self.fix(run: 8, sequence: $0) }
        for fix in second { store.submit(.fix(fix, acknowledgement: nil)) }
        store.flush()
        #expect(Self.same(try store.fixes(ofRun: 8), first + second))
        try Self.expectWellFormed(run: 8, at: path, sequences: Array(1...75))
    }

    /// The writer remembers each run's last row between batches: a rolled-back batch leaves nothing of what it
    /// learned, and rows changed behind its back (deleted, or edited by hand in the shell) are looked up again.
    @Test func theRememberedLastRowNeverGoesStale() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        let database = try Database(path: path, busyTimeout: 1)
        try database.migrate()
        let writer = try FixChunkWriter(database: database)
        let fixes = (1...40).map { Self.fix(run: 1, sequence: Int64($0)) }
        func batch(_ range: Range<Int>, failing: Bool = false) throws {
            do {
                try database.transaction { () throws(StoreError) in
                    try writer.write(run: 1, Array(fixes[range]))
                    if failing { throw StoreError(.full, "full") }
                }
                writer.didCommit()
            } catch {
                writer.didRollBack()
                if !failing { throw error }
            }
        }
        func stored() throws -> [StoredFix] {
            let select = try database.prepare(
                "SELECT first_sequence, count, base_time, fixes FROM fix_chunks WHERE run = 1 ORDER BY first_sequence")
            var read: [StoredFix] = []
            while try select.step() {
                let (first, count, base) = (select.int64(at: 0), Int(select.int64(at: 1)), select.int64(at: 2))
                try select.withTextBytes(at: 3) { (text) throws(StoreError) in
                    try FixChunkCoding.decode(text, run: 1, firstSequence: first, count: count, base: base, into: &read)
                }
            }
            return read
        }
        try batch(0..<5)
        try batch(5..<10, failing: true)
        try batch(5..<12)  // the same fixes again, and more
        #expect(Self.same(try stored(), Array(fixes[0..<12])))
        // Edited by hand: a space after the closing bracket. The row stays readable; new fixes start a row.
        try database.execute("UPDATE fix_chunks SET fixes = fixes || ' ' WHERE run = 1")
        try batch(12..<15)
        #expect(Self.same(try stored(), Array(fixes[0..<15])))
        try batch(15..<18)
        #expect(Self.same(try stored(), Array(fixes[0..<18])))
        // Deleted behind its back: the next fixes make a row of their own.
        try database.execute("DELETE FROM fix_chunks WHERE run = 1")
        try batch(18..<25)
        #expect(Self.same(try stored(), Array(fixes[18..<25])))
        // Resent across what is left: stored once.
        try batch(20..<30)
        #expect(Self.same(try stored(), Array(fixes[18..<30])))
    }

    /// The `fixes` view, through SQLite's own API: one row per fix, the old table's columns and values.
    @Test func theViewShowsOneRowPerFix() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        let store = try SQLiteRunStore(path: path)
        var fixes = (1...70).map { Self.fix(run: 4, sequence: Int64($0)) }
        fixes.append(StoredFix(runID: 4, sequence: 71,
                               fix: Fix(latitude: .nan, longitude: .infinity, accuracy: .nan, timestamp: 1e-300),
                               received: 1_767_225_700.5, rejection: .invalid))
        for fix in fixes { store.submit(.fix(fix, acknowledgement: nil)) }
        store.submit(.fix(Self.fix(run: 9, sequence: 1), acknowledgement: nil))
        store.close()

        let database = try Database(path: path, busyTimeout: 1)
        let select = try database.prepare("""
            SELECT run, sequence, latitude, longitude, accuracy, timestamp, received, rejection,
                   typeof(latitude), typeof(accuracy), typeof(timestamp), typeof(received)
            FROM fixes WHERE run = 4 ORDER BY sequence
            """)
        var rows = 0
        while try select.step() {
            let fix = fixes[rows]
            rows += 1
            #expect(select.int64(at: 0) == 4)
            #expect(select.int64(at: 1) == fix.sequence)
            func expectValue(_ column: Int32, _ value: Double) {
                if value.isNaN {
                    #expect(select.isNull(at: column), "column \(column) of fix \(fix.sequence)")
                } else {
                    #expect(select.double(at: column) == value, "column \(column) of fix \(fix.sequence)")
                }
            }
            expectValue(2, fix.fix.latitude)
            expectValue(3, fix.fix.longitude)
            expectValue(4, fix.fix.accuracy)
            expectValue(5, fix.fix.timestamp)
            expectValue(6, fix.received)
            #expect(select.optionalText(at: 7) == fix.rejection?.rawValue)
            if !fix.fix.latitude.isNaN {
                #expect(select.text(at: 8) == "real" && select.text(at: 9) == "real")
            }
            #expect(select.text(at: 10) == "real" && select.text(at: 11) == "real")
        }
        #expect(rows == fixes.count)
        #expect(try database.integer("SELECT count(*) FROM fixes") == Int64(fixes.count + 1))
        #expect(try database.integer("SELECT sum(count) FROM fix_chunks") == Int64(fixes.count + 1))
        #expect(try database.text("SELECT type FROM sqlite_schema WHERE name = 'fixes'") == "view")
        // The view's columns are the old table's, in its order.
        let columns = try database.prepare("SELECT name FROM pragma_table_info('fixes') ORDER BY cid")
        var names: [String] = []
        while try columns.step() { names.append(columns.text(at: 0)) }
        #expect(names == ["run", "sequence", "latitude", "longitude", "accuracy", "timestamp", "received", "rejection",
                          "altitude"])
    }

    /// The same view in the stock `sqlite3` shell, as README shows it.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func theStockShellReadsTheView() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        let store = try SQLiteRunStore(path: path)
        let fixes = (1...40).map { Self.fix(run: 1, sequence: Int64($0)) }
        for fix in fixes { store.submit(.fix(fix, acknowledgement: nil)) }
        store.close()
        let shell = try ChildProcess(executable: "/usr/bin/sqlite3", arguments: [
            path, "SELECT sequence, printf('%.7f', latitude), accuracy, timestamp - 1767225600, rejection FROM fixes WHERE run = 1 ORDER BY sequence LIMIT 2 OFFSET 12;"
                + " SELECT rejection, count(*) FROM fixes WHERE run = 1 GROUP BY rejection;",
        ])
        #expect(shell.awaitExit() == 0, "\(shell.standardError)")
        #expect(shell.standardOutput == """
            13|\(String(format: "%.7f", fixes[12].fix.latitude))|\(fixes[12].fix.accuracy)|13.0|inaccurate
            14|\(String(format: "%.7f", fixes[13].fix.latitude))|\(fixes[13].fix.accuracy)|14.0|
            |37
            inaccurate|3

            """)
    }
}
