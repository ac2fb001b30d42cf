import CSQLite
import Foundation
import RunCore
import MoonRunnerTestSupport
import Testing
@testable import RunStore

/// The move from the row-per-fix `fixes` table to `fix_chunks` (migration 2026-12-020-fix-chunks).
///
/// `Fixtures/row-per-fix-schema.sqlite` was made by the build before it (commit 71f517c): `moonrunner import
/// strava-paused-two-segments.gpx --runner ann` (run 1, saved, 1461 fixes), then `moonrunner serve` with
/// `moonrunner simulate --route park --speed 40 --name bob --seed 3` for a few seconds and a `kill -9` of the
/// server (run 2, still live, 319 fixes), its WAL then checkpointed into the file with the `sqlite3` shell.
@Suite(.mayBlock) struct FixChunkMigrationTests {
    /// The old table's rows, as the old store read them.
    struct OldRow: Equatable {
        var run: Int64, sequence: Int64
        var latitude: Double?, longitude: Double?, accuracy: Double?, timestamp: Double?, received: Double
        var rejection: String?

        static func == (left: OldRow, right: OldRow) -> Bool {
            func same(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }
            return left.run == right.run && left.sequence == right.sequence && same(left.latitude, right.latitude)
                && same(left.longitude, right.longitude) && same(left.accuracy, right.accuracy)
                && same(left.timestamp, right.timestamp) && same(left.received, right.received)
                && left.rejection == right.rejection
        }

        var stored: StoredFix {
            StoredFix(runID: run, sequence: sequence,
                      fix: Fix(latitude: latitude ?? .nan, longitude: longitude ?? .nan, accuracy: accuracy ?? .nan,
                               timestamp: timestamp ?? .nan),
                      received: received, rejection: rejection.flatMap(FixRejection.init(rawValue:)))
        }
    }

    /// Every row of `fixes` (the table before, the view after), by run and sequence.
    static func rows(at path: String) throws -> [OldRow] {
        let database = try Database(path: path, busyTimeout: 1)
        let select = try database.prepare("""
            SELECT run, sequence, latitude, longitude, accuracy, timestamp, received, rejection
            FROM fixes ORDER BY run, sequence
            """)
        var rows: [OldRow] = []
        while try select.step() {
            rows.append(OldRow(run: select.int64(at: 0), sequence: select.int64(at: 1),
                               latitude: select.optionalDouble(at: 2), longitude: select.optionalDouble(at: 3),
                               accuracy: select.optionalDouble(at: 4), timestamp: select.optionalDouble(at: 5),
                               received: select.double(at: 6), rejection: select.optionalText(at: 7)))
        }
        return rows
    }

    static func objectType(_ name: String, at path: String) throws -> String? {
        try Database(path: path, busyTimeout: 1).text("SELECT type FROM sqlite_schema WHERE name = '\(name)'")
    }

    @Test func aFileOfTheOldBuildMigratesAndItsRunsReadTheSame() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("old.sqlite")
        let fixture = try #require(Bundle.module.url(forResource: "row-per-fix-schema", withExtension: "sqlite",
                                                     subdirectory: "Fixtures"))
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        #expect(try Self.objectType("fixes", at: path) == "table")
        let before = try Self.rows(at: path)
        #expect(before.count == 1461 + 319)

        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        #expect(try Self.objectType("fixes", at: path) == "view")
        #expect(try Database(path: path, busyTimeout: 1).appliedMigrations().contains("2026-12-020-fix-chunks"))
        // The view gives back the old rows exactly; the store reads the same fixes from the chunks.
        #expect(try Self.rows(at: path) == before)
        for run: Int64 in [1, 2] {
            let expected = before.filter { $0.run == run }.map(\.stored)
            #expect(FixChunkStoreTests.same(try store.fixes(ofRun: run), expected), "run \(run)")
        }
        // The live run is still live, and replaying its fixes measures what replaying the old rows did.
        #expect(try store.liveRuns().map(\.id) == [2])
        func distance(_ fixes: [StoredFix]) -> Double {
            var tracker = RunTracker()
            for fix in fixes { _ = tracker.add(fix.fix, now: fix.received) }
            return tracker.snapshot?.distance ?? 0
        }
        let replayed = distance(try store.fixes(ofRun: 2))
        #expect(replayed > 100)
        #expect(replayed == distance(before.filter { $0.run == 2 }.map(\.stored)))
        // The run goes on after the migration, into the same layout.
        let next = (320...340).map { sequence in
            StoredFix(runID: 2, sequence: Int64(sequence), fix: Fix(latitude: 51.53, longitude: -0.15, accuracy: 5,
                                                                     timestamp: 1_800_000_000 + Double(sequence)),
                      received: 1_800_000_000.3 + Double(sequence))
        }
        for fix in next { store.submit(.fix(fix, acknowledgement: nil)) }
        store.flush()
        #expect(try store.fixes(ofRun: 2).count == 319 + next.count)
        #expect(try store.fixes(ofRun: 1).count == 1461)
    }

    /// A file with the old schema and the awkward rows the old store could hold: NULLs for NaN, every
    /// rejection, gaps, runs longer than a chunk, a whole-number REAL, and a rejection text this build does
    /// not know (carried over as it is, and refused on reading as it was before).
    @Test func awkwardOldRowsMoveOverExactly() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("old.sqlite")
        do {
            let database = try Database(path: path, busyTimeout: 1)
            let old = Migration.all.filter { $0.id != "2026-12-020-fix-chunks" }
            try database.migrate(old)
            let insert = try database.prepare("""
                INSERT OR REPLACE INTO fixes (run, sequence, latitude, longitude, accuracy, timestamp, received, rejection)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """)
            var generator = SeededRandom(seed: 5)
            func add(_ run: Int64, _ sequence: Int64, _ latitude: Double?, _ longitude: Double?, _ accuracy: Double?,
                     _ timestamp: Double?, _ received: Double, _ rejection: String?) throws {
                try insert.bind(run, at: 1)
                try insert.bind(sequence, at: 2)
                try insert.bind(latitude, at: 3)
                try insert.bind(longitude, at: 4)
                try insert.bind(accuracy, at: 5)
                try insert.bind(timestamp, at: 6)
                try insert.bind(received, at: 7)
                try insert.bind(rejection, at: 8)
                try insert.run()
            }
            let reasons = FixRejection.allCases.map(\.rawValue)
            for sequence in Int64(1)...500 where sequence % 97 != 0 {  // gaps
                let time = 1_767_225_600 + Double(sequence)
                let received = time + Double(generator.next() % 1_000_000) / 1e6 + 1e-9 * Double(generator.next() % 100)
                let rejection = sequence % 11 == 0 ? reasons[Int(sequence) % reasons.count] : nil
                try add(1, sequence, 51.5 + Double(sequence) * 1e-5, -0.12 + Double(sequence) * 7e-6,
                        Double(generator.next() % 300) / 10, time, received, rejection)
            }
            try add(2, 0, nil, nil, nil, nil, 1_767_225_600.5, "invalid")
            try add(2, 1, 91, 181, -1, 1e-300, 1_767_225_601, "invalid")
            try add(2, 2, 51.5, -0.12, 5, 4_102_444_800, 1_767_225_602, "future")
            try add(3, 7, 51.5, -0.12, 5, 1_767_225_600, 1_767_225_600, "cosmic_ray")  // unknown to this build
        }
        let before = try Self.rows(at: path)
        #expect(before.count == 500 - 5 + 4)

        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        #expect(try Self.rows(at: path) == before)
        for run: Int64 in [1, 2] {
            #expect(FixChunkStoreTests.same(try store.fixes(ofRun: run), before.filter { $0.run == run }.map(\.stored)))
        }
        let error = #expect(throws: StoreError.self) { try store.fixes(ofRun: 3) }
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains("unknown rejection cosmic_ray") == true)
        // Rows are chunks of consecutive sequences: a gap starts a new one.
        try FixChunkStoreTests.expectWellFormed(run: 1, at: path, sequences: before.filter { $0.run == 1 }.map(\.sequence))
    }

    @Test func anEmptyOldFileMigratesToo() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("old.sqlite")
        try Database(path: path, busyTimeout: 1).migrate(Migration.all.filter { $0.id != "2026-12-020-fix-chunks" })
        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        #expect(try store.fixes(ofRun: 1).isEmpty)
        #expect(try Self.objectType("fixes", at: path) == "view")
        #expect(try Self.objectType("fix_chunks", at: path) == "table")
    }
}
