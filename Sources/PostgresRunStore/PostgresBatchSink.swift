import Foundation
import RunCore
import RunStore

/// The PostgreSQL side of the write path: one batch, one transaction. The batch's fixes go in one multi-row
/// `INSERT … SELECT FROM unnest(…)` (its columns as binary array parameters), the rare other writes one
/// statement each, then `COMMIT`; the write queue acks only after this returns, so only after the server said `COMMIT`.
///
/// Every write is idempotent (inserts do nothing or replace the same row; the history merge is a min/max), so
/// a batch whose `COMMIT` reached the server but whose answer was lost is simply applied again on retry, and
/// a fix sent again is stored once: the key is (run, sequence).
///
/// Writer thread only once the store is open (the write queue calls `commit` and `close` from its thread).
final class PostgresBatchSink: BatchSink {
    /// The write connection; writer thread only. Reconnected at the next batch after it broke.
    private var connection: PostgresConnection?
    /// True after a failed batch until one commits; writer thread only.
    private var failing = false
    /// Called on the writer thread at the first commit after failures (the readers then retry at once).
    private let recovered: @Sendable () -> Void

    init(connection: PostgresConnection, recovered: @escaping @Sendable () -> Void) {
        self.connection = connection
        self.recovered = recovered
    }

    func commit(_ writes: [StoreWrite]) throws(StoreError) {
        guard let connection else {
            throw StoreError.closed
        }
        do throws(StoreError) {
            if !connection.isConnected { try connection.reconnect() }
            try connection.execute("BEGIN")
            var fixes: [StoredFix] = []
            for write in writes {
                if case .fix(let fix, _) = write { fixes.append(fix) } else { try apply(write, on: connection) }
            }
            // Fixes touch no other table and no other write touches theirs: inserting them after the rest of
            // the batch changes nothing but the number of round trips.
            if !fixes.isEmpty { try insert(fixes, on: connection) }
            let result = try connection.execute("COMMIT")
            // A COMMIT of a transaction that failed is answered ROLLBACK, successfully: not an ack.
            guard result.commandStatus == "COMMIT" else {
                throw StoreError(.unavailable, "the batch was rolled back (\(result.commandStatus))",
                                 underlying: .postgres(sqlState: "40000"))
            }
            if failing {
                failing = false
                recovered()
            }
        } catch {
            failing = true
            if connection.isConnected && connection.isInTransaction { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    func close() {
        connection = nil
    }

    /// One multi-row insert; the last of several writes of one (run, sequence) wins, as it would one by one
    /// (PostgreSQL refuses to update one row twice in a statement).
    private func insert(_ fixes: [StoredFix], on connection: PostgresConnection) throws(StoreError) {
        struct Key: Hashable { var run: Int64, sequence: Int64 }
        var seen = Set<Key>()
        var unique: [StoredFix] = []
        unique.reserveCapacity(fixes.count)
        for fix in fixes.reversed() where seen.insert(Key(run: fix.runID, sequence: fix.sequence)).inserted {
            unique.append(fix)
        }
        try connection.query("""
            INSERT INTO fixes (run, sequence, latitude, longitude, accuracy, timestamp, received, rejection, altitude)
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::double precision[], $4::double precision[],
                $5::double precision[], $6::double precision[], $7::double precision[], $8::text[],
                $9::double precision[])
            ON CONFLICT (run, sequence) DO UPDATE SET latitude = excluded.latitude, longitude = excluded.longitude,
                accuracy = excluded.accuracy, timestamp = excluded.timestamp, received = excluded.received,
                rejection = excluded.rejection, altitude = excluded.altitude
            """, binary: Self.columns(of: unique).map(\.bytes))
    }

    /// The fixes' columns as binary arrays, in the insert's order.
    private static func columns(of fixes: [StoredFix]) -> [PostgresBinaryArray] {
        var run = PostgresBinaryArray(of: .bigint, capacity: fixes.count)
        var sequence = PostgresBinaryArray(of: .bigint, capacity: fixes.count)
        var doubles = (0..<5).map { _ in PostgresBinaryArray(of: .doublePrecision, capacity: fixes.count) }
        var rejection = PostgresBinaryArray(of: .text, capacity: fixes.count)
        var altitude = PostgresBinaryArray(of: .doublePrecision, capacity: fixes.count)
        for fix in fixes {
            run.append(fix.runID)
            sequence.append(fix.sequence)
            doubles[0].append(fix.fix.latitude)
            doubles[1].append(fix.fix.longitude)
            doubles[2].append(fix.fix.accuracy)
            doubles[3].append(fix.fix.timestamp)
            doubles[4].append(fix.received)
            rejection.append(fix.rejection?.rawValue)
            altitude.append(fix.fix.altitude)
        }
        return [run, sequence] + doubles + [rejection, altitude]
    }

    private static let rejectionColumns = FixRejection.allCases.map { "rejected_\($0.rawValue)" }

    /// The finished run's upsert; its column list comes from `FixRejection`, never from input.
    private static let upsertFinishedRun = """
        INSERT INTO runs (id, runner, started, ended, distance, elapsed, moving_time, status, splits, checkpoints,
            \(rejectionColumns.joined(separator: ", ")), elevation_gain, elevation_loss)
        VALUES ($1::bigint, $2, $3::double precision, $4::double precision, $5::double precision,
            $6::double precision, $7::double precision, $8, $9, $10,
            \(rejectionColumns.indices.map { "$\(11 + $0)::bigint" }.joined(separator: ", ")),
            $\(11 + rejectionColumns.count)::double precision, $\(12 + rejectionColumns.count)::double precision)
        ON CONFLICT (id) DO UPDATE SET runner = excluded.runner, started = excluded.started, ended = excluded.ended,
            distance = excluded.distance, elapsed = excluded.elapsed, moving_time = excluded.moving_time,
            status = excluded.status, splits = excluded.splits, checkpoints = excluded.checkpoints,
            elevation_gain = excluded.elevation_gain, elevation_loss = excluded.elevation_loss,
            \(rejectionColumns.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        """

    private func apply(_ write: StoreWrite, on connection: PostgresConnection) throws(StoreError) {
        switch write {
        case .runner(let name, let keyHash, let created):
            // Claiming a name is this unique insert: whichever node commits first keeps its key.
            try connection.query("""
                INSERT INTO runners (name, key_hash, created) VALUES ($1, $2, $3::double precision)
                ON CONFLICT (name) DO NOTHING
                """, [name, keyHash, PostgresValue.double(created)])
        case .runStarted(let id, let runner, let started):
            try connection.query("""
                INSERT INTO runs (id, runner, started, status) VALUES ($1::bigint, $2, $3::double precision, 'live')
                ON CONFLICT (id) DO UPDATE SET started = excluded.started, status = 'live'
                    WHERE runs.ended IS NULL AND runs.status IN ('live', 'discarded')
                """, [String(id), runner, PostgresValue.double(started)])
        case .runHeld(let id, let runner, let started):
            try connection.query("""
                INSERT INTO runs (id, runner, started, status) VALUES ($1::bigint, $2, $3::double precision, 'discarded')
                ON CONFLICT (id) DO UPDATE SET started = excluded.started
                    WHERE runs.ended IS NULL AND runs.status = 'discarded'
                """, [String(id), runner, PostgresValue.double(started)])
        case .fix(let fix, _):
            try insert([fix], on: connection)
        case .award(let stored):
            let award = stored.award
            try connection.query("""
                INSERT INTO badge_awards (runner, run, badge, tier, timestamp, latitude, longitude, speed, elapsed,
                    badge_name, badge_distance, badge_information)
                VALUES ($1, $2::bigint, $3, $4, $5::double precision, $6::double precision, $7::double precision,
                    $8::double precision, $9::double precision, $10, $11::double precision, $12)
                ON CONFLICT (run, badge, tier) DO UPDATE SET timestamp = excluded.timestamp,
                    latitude = excluded.latitude, longitude = excluded.longitude, speed = excluded.speed,
                    elapsed = excluded.elapsed
                """, [stored.runner, String(stored.runID), award.badge.id, award.tier.rawValue,
                      PostgresValue.double(award.timestamp), PostgresValue.double(award.coordinate.latitude),
                      PostgresValue.double(award.coordinate.longitude), PostgresValue.double(award.speed),
                      PostgresValue.double(award.elapsed), award.badge.name, PostgresValue.double(award.badge.distance),
                      award.badge.information])
        case .runFinished(let record, let splits, let checkpoints):
            var values: [String?] = [
                String(record.id), record.runner, PostgresValue.double(record.started),
                PostgresValue.double(record.ended), PostgresValue.double(record.distance),
                PostgresValue.double(record.elapsed), PostgresValue.double(record.movingTime), record.status.rawValue,
                try JSONColumn.encode(splits), try JSONColumn.encode(checkpoints),
            ]
            values += FixRejection.allCases.map { String(record.rejections[$0] ?? 0) }
            values += [PostgresValue.double(record.elevationGain), PostgresValue.double(record.elevationLoss)]
            try connection.query(Self.upsertFinishedRun, values)
        case .history(let runner, let history):
            // The same merge as BadgeHistory.merged(with:): LEAST and GREATEST skip NULLs, as the merge does.
            for (badge, record) in history.records.sorted(by: { $0.key < $1.key }) {
                try connection.query("""
                    INSERT INTO badge_records (runner, badge, earned_at, reference_speed, silver_at, gold_at, best_speed)
                    VALUES ($1, $2, $3::double precision, $4::double precision, $5::double precision,
                        $6::double precision, $7::double precision)
                    ON CONFLICT (runner, badge) DO UPDATE SET
                        reference_speed = CASE WHEN excluded.earned_at < badge_records.earned_at
                            THEN excluded.reference_speed ELSE badge_records.reference_speed END,
                        earned_at = LEAST(badge_records.earned_at, excluded.earned_at),
                        silver_at = LEAST(badge_records.silver_at, excluded.silver_at),
                        gold_at = LEAST(badge_records.gold_at, excluded.gold_at),
                        best_speed = GREATEST(badge_records.best_speed, excluded.best_speed)
                    """, [runner, badge, PostgresValue.double(record.earnedAt), PostgresValue.double(record.referenceSpeed),
                          PostgresValue.double(record.silverAt), PostgresValue.double(record.goldAt),
                          PostgresValue.double(record.bestSpeed)])
            }
        case .imported(let record):
            try connection.query("""
                INSERT INTO run_imports (run, runner, format, first_point_time, point_count, skipped_points,
                    device_distance, pauses_before)
                VALUES ($1::bigint, $2, $3, $4::double precision, $5::bigint, $6::bigint, $7::double precision, $8)
                ON CONFLICT (run) DO UPDATE SET runner = excluded.runner, format = excluded.format,
                    first_point_time = excluded.first_point_time, point_count = excluded.point_count,
                    skipped_points = excluded.skipped_points, device_distance = excluded.device_distance,
                    pauses_before = excluded.pauses_before
                """, [String(record.runID), record.runner, record.format.rawValue,
                      PostgresValue.double(record.firstPointTime), String(record.pointCount),
                      String(record.skippedPoints), PostgresValue.double(record.deviceDistance),
                      try JSONColumn.encode(record.pausesBefore)])
        case .device(let token):
            try connection.query("""
                INSERT INTO device_tokens (token_hash, runner, created, label) VALUES ($1, $2, $3::double precision, $4)
                ON CONFLICT (token_hash) DO NOTHING
                """, [token.hash, token.runner, PostgresValue.double(token.created), token.label])
        case .revokeDevice(let runner, let hash, let at):
            try connection.query("""
                UPDATE device_tokens SET revoked = $3::double precision
                WHERE runner = $1 AND revoked IS NULL AND ($2::text IS NULL OR token_hash = $2::text)
                """, [runner, hash, PostgresValue.double(at)])
        case .privacy(let runner, let privacy):
            try connection.query("UPDATE runners SET private = $2::boolean, privacy_zone = $3::double precision WHERE name = $1",
                                 [runner, privacy.isPrivate ? "true" : "false", PostgresValue.double(privacy.zone)])
        case .share(let token):
            try connection.query("""
                INSERT INTO share_tokens (token_hash, runner, created, expires)
                VALUES ($1, $2, $3::double precision, $4::double precision)
                ON CONFLICT (token_hash) DO NOTHING
                """, [token.hash, token.runner, PostgresValue.double(token.created), PostgresValue.double(token.expires)])
        case .revokeShare(let runner, let hash, let at):
            try connection.query("""
                UPDATE share_tokens SET revoked = $3::double precision
                WHERE runner = $1 AND revoked IS NULL AND ($2::text IS NULL OR token_hash = $2::text)
                """, [runner, hash, PostgresValue.double(at)])
        case .course(let course):
            try connection.query("""
                INSERT INTO courses (name, created, path, points) VALUES ($1, $2::double precision, $3, $4)
                ON CONFLICT (name) DO UPDATE SET created = excluded.created, path = excluded.path, points = excluded.points
                """, [course.name, PostgresValue.double(course.created), try JSONColumn.encode(course.pathJSON),
                      try JSONColumn.encode(course.points)])
        case .removeCourse(let name):
            try connection.query("DELETE FROM courses WHERE name = $1", [name])
        }
    }
}
