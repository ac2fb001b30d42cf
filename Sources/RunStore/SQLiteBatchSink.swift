import CSQLite
import Foundation
import RunCore

/// The SQLite side of the write path: the write connection and its prepared statements, used only by the
/// writer thread once the store is open.
final class SQLiteBatchSink: BatchSink {
    private let database: Database
    private let insertRunner: Statement
    private let insertRun: Statement
    private let holdRun: Statement
    /// Fixes go into `fix_chunks` through this, a run at a time.
    private let chunks: FixChunkWriter
    /// Where the fixes of the batch being committed are, by run (reused).
    private var fixOrder: [FixPosition] = []
    /// One run's fixes of the batch, in submission order (reused).
    private var runFixes: [StoredFix] = []
    /// Runs ended in the batch being committed (the chunk writer stops remembering their last rows).
    private var finishedRuns: [Int64] = []
    private let insertAward: Statement
    private let upsertFinishedRun: Statement
    private let insertRecord: Statement
    private let upsertImport: Statement

    /// Called after each successful commit (the background checkpointer's nudge).
    private let afterCommit: (@Sendable () -> Void)?
    /// Called once when the sink closes, before its final checkpoint.
    private let beforeClose: (@Sendable () -> Void)?

    init(database: Database, afterCommit: (@Sendable () -> Void)? = nil,
         beforeClose: (@Sendable () -> Void)? = nil) throws(StoreError) {
        self.database = database
        self.afterCommit = afterCommit
        self.beforeClose = beforeClose
        insertRunner = try database.prepare(
            "INSERT INTO runners (name, key_hash, created) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO NOTHING")
        insertRun = try database.prepare(
            """
            INSERT INTO runs (id, runner, started, status) VALUES (?1, ?2, ?3, 'live')
            ON CONFLICT (id) DO UPDATE SET started = excluded.started, status = 'live'
                WHERE runs.ended IS NULL AND runs.status IN ('live', 'discarded')
            """)
        holdRun = try database.prepare("""
            INSERT INTO runs (id, runner, started, status) VALUES (?1, ?2, ?3, 'discarded')
            ON CONFLICT (id) DO UPDATE SET started = excluded.started
                WHERE runs.ended IS NULL AND runs.status = 'discarded'
            """)
        chunks = try FixChunkWriter(database: database)
        insertAward = try database.prepare("""
            INSERT INTO badge_awards (runner, run, badge, tier, timestamp, latitude, longitude, speed,
                elapsed, badge_name, badge_distance, badge_information)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            ON CONFLICT (run, badge, tier) DO UPDATE SET timestamp = excluded.timestamp, latitude = excluded.latitude,
                longitude = excluded.longitude, speed = excluded.speed, elapsed = excluded.elapsed
            """)
        let rejectionColumns = FixRejection.allCases.map { "rejected_\($0.rawValue)" }
        let rejectionPlaceholders = rejectionColumns.indices.map { "?\(11 + $0)" }
        let elevationPlaceholders = "?\(11 + rejectionColumns.count), ?\(12 + rejectionColumns.count)"
        upsertFinishedRun = try database.prepare("""
            INSERT INTO runs (id, runner, started, ended, distance, elapsed, moving_time, status, splits, checkpoints,
                \(rejectionColumns.joined(separator: ", ")), elevation_gain, elevation_loss)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \(rejectionPlaceholders.joined(separator: ", ")),
                \(elevationPlaceholders))
            ON CONFLICT (id) DO UPDATE SET runner = excluded.runner, started = excluded.started,
                ended = excluded.ended, distance = excluded.distance, elapsed = excluded.elapsed,
                moving_time = excluded.moving_time, status = excluded.status, splits = excluded.splits,
                checkpoints = excluded.checkpoints, elevation_gain = excluded.elevation_gain,
                elevation_loss = excluded.elevation_loss,
                \(rejectionColumns.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            """)
        // The same merge as BadgeHistory.merged(with:), in SQL, so a server and an import writing one runner
        // at once both keep what they won.
        insertRecord = try database.prepare("""
            INSERT INTO badge_records (runner, badge, earned_at, reference_speed, silver_at, gold_at, best_speed)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT (runner, badge) DO UPDATE SET
                reference_speed = CASE WHEN excluded.earned_at < earned_at THEN excluded.reference_speed
                                       ELSE reference_speed END,
                earned_at = min(earned_at, excluded.earned_at),
                silver_at = coalesce(min(silver_at, excluded.silver_at), silver_at, excluded.silver_at),
                gold_at = coalesce(min(gold_at, excluded.gold_at), gold_at, excluded.gold_at),
                best_speed = max(best_speed, excluded.best_speed)
            """)
        upsertImport = try database.prepare("""
            INSERT OR REPLACE INTO run_imports (run, runner, format, first_point_time, point_count, skipped_points,
                device_distance, pauses_before)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
    }

    func commit(_ writes: [StoreWrite]) throws(StoreError) {
        fixOrder.removeAll(keepingCapacity: true)
        finishedRuns.removeAll(keepingCapacity: true)
        do {
            try database.transaction(.immediate) { () throws(StoreError) in
                // Fixes are gathered per run and written after the other writes, a run at a time (in id order,
                // which is the table's key order): many fixes to a row instead of a row per fix. Nothing else in
                // a batch depends on a fix being written before it (the schema declares no enforced foreign keys).
                for index in writes.indices {
                    // Fixes are looked at in place (see `StoreWrite.storedFix`): they are nearly all of a batch.
                    if let fix = writes[index].storedFix {
                        fixOrder.append(FixPosition(run: fix.runID, index: Int32(truncatingIfNeeded: index)))
                        continue
                    }
                    let write = writes[index]
                    if case .runFinished(let record, _, _) = write { finishedRuns.append(record.id) }
                    try apply(write)
                }
                // By run, and within a run in submission order: one sort instead of an array per run.
                fixOrder.sort { ($0.run, $0.index) < ($1.run, $1.index) }
                var start = 0
                while start < fixOrder.count {
                    let run = fixOrder[start].run
                    runFixes.removeAll(keepingCapacity: true)
                    var end = start
                    while end < fixOrder.count, fixOrder[end].run == run {
                        if let fix = writes[Int(fixOrder[end].index)].storedFix { runFixes.append(fix) }
                        end += 1
                    }
                    try chunks.write(run: run, runFixes)
                    start = end
                }
                for run in finishedRuns { chunks.forget(run: run) }
            }
        } catch {
            chunks.didRollBack()
            throw error
        }
        chunks.didCommit()
        afterCommit?()
    }

    func close() {
        beforeClose?()
        // Statements and the connection are finalized and closed when the sink goes away; a checkpoint now
        // folds the WAL back into the main file so a closed database is one self-contained file.
        _ = sqlite3_wal_checkpoint_v2(database.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
    }

    private func apply(_ write: StoreWrite) throws(StoreError) {
        switch write {
        case .runner(let name, let keyHash, let created):
            try insertRunner.bind(name, at: 1)
            try insertRunner.bind(keyHash, at: 2)
            try insertRunner.bind(created, at: 3)
            try insertRunner.run()
        case .runStarted(let id, let runner, let started):
            try insertRun.bind(id, at: 1)
            try insertRun.bind(runner, at: 2)
            try insertRun.bind(started, at: 3)
            try insertRun.run()
        case .runHeld(let id, let runner, let started):
            try holdRun.bind(id, at: 1)
            try holdRun.bind(runner, at: 2)
            try holdRun.bind(started, at: 3)
            try holdRun.run()
        case .fix(let stored, _):
            try chunks.write(run: stored.runID, [stored])  // commit() gathers fixes; this is for completeness
        case .award(let stored):
            let award = stored.award
            try insertAward.bind(stored.runner, at: 1)
            try insertAward.bind(stored.runID, at: 2)
            try insertAward.bind(award.badge.id, at: 3)
            try insertAward.bind(award.tier.rawValue, at: 4)
            try insertAward.bind(award.timestamp, at: 5)
            try insertAward.bind(award.coordinate.latitude, at: 6)
            try insertAward.bind(award.coordinate.longitude, at: 7)
            try insertAward.bind(award.speed, at: 8)
            try insertAward.bind(award.elapsed, at: 9)
            try insertAward.bind(award.badge.name, at: 10)
            try insertAward.bind(award.badge.distance, at: 11)
            try insertAward.bind(award.badge.information, at: 12)
            try insertAward.run()
        case .runFinished(let record, let splits, let checkpoints):
            let statement = upsertFinishedRun
            try statement.bind(record.id, at: 1)
            try statement.bind(record.runner, at: 2)
            try statement.bind(record.started, at: 3)
            try statement.bind(record.ended, at: 4)
            try statement.bind(record.distance, at: 5)
            try statement.bind(record.elapsed, at: 6)
            try statement.bind(record.movingTime, at: 7)
            try statement.bind(record.status.rawValue, at: 8)
            try statement.bind(try JSONColumn.encode(splits), at: 9)
            try statement.bind(try JSONColumn.encode(checkpoints), at: 10)
            for (offset, reason) in FixRejection.allCases.enumerated() {
                try statement.bind(Int64(record.rejections[reason] ?? 0), at: Int32(11 + offset))
            }
            try statement.bind(record.elevationGain, at: Int32(11 + FixRejection.allCases.count))
            try statement.bind(record.elevationLoss, at: Int32(12 + FixRejection.allCases.count))
            try statement.run()
        case .history(let runner, let history):
            for (badge, record) in history.records.sorted(by: { $0.key < $1.key }) {
                try insertRecord.bind(runner, at: 1)
                try insertRecord.bind(badge, at: 2)
                try insertRecord.bind(record.earnedAt, at: 3)
                try insertRecord.bind(record.referenceSpeed, at: 4)
                try insertRecord.bind(record.silverAt, at: 5)
                try insertRecord.bind(record.goldAt, at: 6)
                try insertRecord.bind(record.bestSpeed, at: 7)
                try insertRecord.run()
            }
        case .imported(let record):
            try upsertImport.bind(record.runID, at: 1)
            try upsertImport.bind(record.runner, at: 2)
            try upsertImport.bind(record.format.rawValue, at: 3)
            try upsertImport.bind(record.firstPointTime, at: 4)
            try upsertImport.bind(Int64(record.pointCount), at: 5)
            try upsertImport.bind(Int64(record.skippedPoints), at: 6)
            try upsertImport.bind(record.deviceDistance, at: 7)
            try upsertImport.bind(try JSONColumn.encode(record.pausesBefore), at: 8)
            try upsertImport.run()
        case .device(let token):
            try insert(token)
        case .revokeDevice(let runner, let hash, let at):
            try revokeTokens(of: DeviceToken.self, runner: runner, hash: hash, at: at)
        case .privacy(let runner, let privacy):
            let update = try database.cachedStatement("UPDATE runners SET private = ?2, privacy_zone = ?3 WHERE name = ?1")
            try update.bind(runner, at: 1)
            try update.bind(Int64(privacy.isPrivate ? 1 : 0), at: 2)
            try update.bind(privacy.zone, at: 3)
            try update.run()
        case .share(let token):
            try insert(token)
        case .revokeShare(let runner, let hash, let at):
            try revokeTokens(of: ShareToken.self, runner: runner, hash: hash, at: at)
        case .course(let course):
            let upsert = try database.cachedStatement(
                "INSERT OR REPLACE INTO courses (name, created, path, points) VALUES (?1, ?2, ?3, ?4)")
            try upsert.bind(course.name, at: 1)
            try upsert.bind(course.created, at: 2)
            try upsert.bind(try JSONColumn.encode(course.pathJSON), at: 3)
            try upsert.bind(try JSONColumn.encode(course.points), at: 4)
            try upsert.run()
        case .removeCourse(let name):
            let delete = try database.cachedStatement("DELETE FROM courses WHERE name = ?1")
            try delete.bind(name, at: 1)
            try delete.run()
        }
    }

    // MARK: Tokens

    /// Stores a new device or share token (kept if one with its hash is there already).
    private func insert<Token: StoredToken>(_ token: Token) throws(StoreError) {
        let insert = try database.cachedStatement("""
            INSERT OR IGNORE INTO \(Token.storage.table) (token_hash, runner, created, \(Token.storage.ownColumn)) \
            VALUES (?1, ?2, ?3, ?4)
            """)
        try insert.bind(token.hash, at: 1)
        try insert.bind(token.runner, at: 2)
        try insert.bind(token.created, at: 3)
        try token.bindOwnColumn(to: insert, at: 4)
        try insert.run()
    }

    /// Revokes a runner's tokens of a kind still valid: the one with `hash`, or all of them when it is nil.
    private func revokeTokens<Token: StoredToken>(of kind: Token.Type, runner: String, hash: String?,
                                                  at time: Double) throws(StoreError) {
        let revoke = try database.cachedStatement("""
            UPDATE \(Token.storage.table) SET revoked = ?3
            WHERE runner = ?1 AND revoked IS NULL AND (?2 IS NULL OR token_hash = ?2)
            """)
        try revoke.bind(runner, at: 1)
        try revoke.bind(hash, at: 2)
        try revoke.bind(time, at: 3)
        try revoke.run()
    }
}

/// A fix's run and its place in the batch.
private struct FixPosition {
    var run: Int64
    var index: Int32
}

/// JSON text columns (splits, checkpoints).
package enum JSONColumn {
    package static func encode<Value: Encodable>(_ value: Value) throws(StoreError) -> String {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw StoreError(.mismatch, "cannot encode \(Value.self) as JSON: \(error)")
        }
    }

    package static func decode<Value: Decodable>(_ type: Value.Type, from text: String, context: String) throws(StoreError) -> Value {
        do {
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError(.corrupt, "\(context): stored JSON is not valid: \(error)")
        }
    }
}
