import RunCore
import RunStore

extension PostgresRunStore {
    /// The runner with this name, with its badge history.
    /// Claims a name with one unique insert, committed before it returns: of several nodes claiming the same
    /// name at once, exactly one gets true.
    public func claimRunner(name: String, keyHash: String, created: Double) throws(StoreError) -> Bool {
        try lookups.read { (connection) throws(StoreError) -> Bool in
            let rows = try connection.query("""
                INSERT INTO runners (name, key_hash, created) VALUES ($1, $2, $3::double precision)
                ON CONFLICT (name) DO NOTHING RETURNING name
                """, [name, keyHash, PostgresValue.double(created)])
            return rows.rowCount == 1
        }
    }

    public func runner(named name: String) throws(StoreError) -> RunnerRecord? {
        try lookups.read { (connection) throws(StoreError) -> RunnerRecord? in
            let rows = try connection.query(
                "SELECT name, key_hash, created, private, privacy_zone FROM runners WHERE name = $1", [name])
            guard rows.rowCount > 0 else { return nil }
            var runner = RunnerRecord(name: rows.text(0, 0), keyHash: rows.text(0, 1), created: try rows.double(0, 2),
                                      privacy: RunnerPrivacy(isPrivate: rows.text(0, 3) == "t",
                                                             zone: try rows.double(0, 4)))
            let records = try connection.query("""
                SELECT badge, earned_at, reference_speed, silver_at, gold_at, best_speed
                FROM badge_records WHERE runner = $1
                """, [name])
            for row in 0..<records.rowCount {
                runner.history.records[records.text(row, 0)] = BadgeHistory.Record(
                    earnedAt: try records.double(row, 1), referenceSpeed: try records.double(row, 2),
                    silverAt: try records.optionalDouble(row, 3), goldAt: try records.optionalDouble(row, 4),
                    bestSpeed: try records.double(row, 5))
            }
            return runner
        }
    }

    /// A runner's runs in history (not the discarded ones), newest first.
    public func runs(of runner: String, offset: Int, limit: Int) throws(StoreError) -> [RunRecord] {
        try reader.read { (connection) throws(StoreError) -> [RunRecord] in
            try connection.query("""
                SELECT \(Self.runColumns) FROM runs WHERE runner = $1 AND status <> 'discarded'
                ORDER BY started DESC, id DESC LIMIT $2::bigint OFFSET $3::bigint
                """, [runner, String(max(0, limit)), String(max(0, offset))]).rows(Self.runRecord)
        }
    }

    /// A run in history with its splits, checkpoints and awards (nil for a discarded one).
    public func run(id: Int64) throws(StoreError) -> StoredRun? {
        try reader.read { (connection) throws(StoreError) -> StoredRun? in
            let rows = try connection.query("""
                SELECT \(Self.runColumns), splits, checkpoints FROM runs WHERE id = $1::bigint AND status <> 'discarded'
                """, [String(id)])
            guard rows.rowCount > 0 else { return nil }
            let record = try Self.runRecord(rows, 0)
            let context = "run \(id)"
            let splits = try JSONColumn.decode([Split].self, from: rows.text(0, Self.runColumnCount), context: context)
            let checkpoints = try JSONColumn.decode([CheckpointSplit].self, from: rows.text(0, Self.runColumnCount + 1),
                                                    context: context)
            let awards = try Self.awards(on: connection, byRun: id)
            return StoredRun(record: record, splits: splits, checkpoints: checkpoints, awards: awards)
        }
    }

    /// Whose run `id` is (in history), with the runner's privacy: one query, found or not.
    public func owner(ofRun id: Int64) throws(StoreError) -> RunOwner? {
        try reader.read { (connection) throws(StoreError) -> RunOwner? in
            let rows = try connection.query("""
                SELECT runs.runner, coalesce(runners.private, false), coalesce(runners.privacy_zone, 0)
                FROM runs LEFT JOIN runners ON runners.name = runs.runner
                WHERE runs.id = $1::bigint AND runs.status <> 'discarded'
                """, [String(id)])
            guard rows.rowCount > 0 else { return nil }
            return RunOwner(runner: rows.text(0, 0),
                            privacy: RunnerPrivacy(isPrivate: rows.text(0, 1) == "t", zone: try rows.double(0, 2)))
        }
    }

    /// All fixes of a run, accepted and rejected, by sequence.
    public func fixes(ofRun id: Int64) throws(StoreError) -> [StoredFix] {
        try reader.read { (connection) throws(StoreError) -> [StoredFix] in
            try Self.fixes(of: id, connection.query("""
                SELECT sequence, latitude, longitude, accuracy, timestamp, received, rejection, altitude
                FROM fixes WHERE run = $1::bigint ORDER BY sequence
                """, [String(id)]))
        }
    }

    /// At most `limit` fixes of a run from sequence `first` on, by sequence (a range of the primary key).
    public func fixes(ofRun id: Int64, from first: Int64, limit: Int) throws(StoreError) -> [StoredFix] {
        guard limit > 0 else { return [] }
        return try reader.read { (connection) throws(StoreError) -> [StoredFix] in
            try Self.fixes(of: id, connection.query("""
                SELECT sequence, latitude, longitude, accuracy, timestamp, received, rejection, altitude
                FROM fixes WHERE run = $1::bigint AND sequence >= $2::bigint ORDER BY sequence LIMIT $3::bigint
                """, [String(id), String(first), String(limit)]))
        }
    }

    /// The fixes of run `id` in `rows` (sequence, latitude, longitude, accuracy, timestamp, received, rejection,
    /// altitude).
    private static func fixes(of id: Int64, _ rows: PostgresResult) throws(StoreError) -> [StoredFix] {
        var fixes: [StoredFix] = []
        fixes.reserveCapacity(rows.rowCount)
        for row in 0..<rows.rowCount {
            let fix = Fix(latitude: try rows.optionalDouble(row, 1) ?? .nan,
                          longitude: try rows.optionalDouble(row, 2) ?? .nan,
                          accuracy: try rows.optionalDouble(row, 3) ?? .nan,
                          timestamp: try rows.optionalDouble(row, 4) ?? .nan,
                          altitude: try rows.optionalDouble(row, 7))
            var rejection: FixRejection?
            if let reason = rows.optionalText(row, 6) {
                guard let known = FixRejection(rawValue: reason) else {
                    throw StoreError(.corrupt,
                                     "fix \(rows.text(row, 0)) of run \(id): unknown rejection \(reason)")
                }
                rejection = known
            }
            fixes.append(StoredFix(runID: id, sequence: try rows.int64(row, 0), fix: fix,
                                   received: try rows.double(row, 5), rejection: rejection))
        }
        return fixes
    }

    /// All awards of a runner, in the order they were stored.
    public func awards(of runner: String) throws(StoreError) -> [StoredAward] {
        try reader.read { (connection) throws(StoreError) -> [StoredAward] in
            try Self.awards(on: connection, byRunner: runner)
        }
    }

    /// Runs still marked live.
    public func liveRuns() throws(StoreError) -> [RunRecord] {
        try reader.read { (connection) throws(StoreError) -> [RunRecord] in
            try connection.query("SELECT \(Self.runColumns) FROM runs WHERE status = 'live' ORDER BY id").rows(Self.runRecord)
        }
    }

    /// The longest run of a runner that is not discarded, in metres (0 without runs), in one query.
    public func farthestDistance(of runner: String) throws(StoreError) -> Double {
        try reader.read { (connection) throws(StoreError) -> Double in
            let rows = try connection.query(
                "SELECT coalesce(max(distance), 0) FROM runs WHERE runner = $1 AND status <> 'discarded'", [runner])
            return rows.rowCount > 0 ? try rows.double(0, 0) : 0
        }
    }

    // MARK: Rows

    private static let rejectionColumns = FixRejection.allCases.map { "rejected_\($0.rawValue)" }
    private static let runColumns = (["id", "runner", "started", "ended", "distance", "elapsed", "moving_time", "status"]
        + rejectionColumns + ["elevation_gain", "elevation_loss"]).joined(separator: ", ")
    private static let runColumnCount = 10 + FixRejection.allCases.count

    private static func runRecord(_ rows: PostgresResult, _ row: Int) throws(StoreError) -> RunRecord {
        let id = try rows.int64(row, 0)
        guard let status = RunStatus(rawValue: rows.text(row, 7)) else {
            throw StoreError(.corrupt, "run \(id): unknown status \(rows.text(row, 7))")
        }
        var rejections: [FixRejection: Int] = [:]
        for (offset, reason) in FixRejection.allCases.enumerated() {
            let count = Int(try rows.int64(row, 8 + offset))
            if count != 0 { rejections[reason] = count }
        }
        return RunRecord(id: id, runner: rows.text(row, 1), started: try rows.double(row, 2),
                         ended: try rows.optionalDouble(row, 3), distance: try rows.double(row, 4),
                         elapsed: try rows.double(row, 5), movingTime: try rows.double(row, 6),
                         status: status, rejections: rejections,
                         elevationGain: try rows.optionalDouble(row, 8 + FixRejection.allCases.count),
                         elevationLoss: try rows.optionalDouble(row, 9 + FixRejection.allCases.count))
    }

    private static let awardColumns = """
        SELECT runner, run, badge, tier, timestamp, latitude, longitude, speed, elapsed,
            badge_name, badge_distance, badge_information FROM badge_awards
        """

    private static func awards(on connection: PostgresConnection, byRun id: Int64) throws(StoreError) -> [StoredAward] {
        try awards(try connection.query("\(awardColumns) WHERE run = $1::bigint ORDER BY position", [String(id)]))
    }

    private static func awards(on connection: PostgresConnection, byRunner runner: String) throws(StoreError) -> [StoredAward] {
        try awards(try connection.query("\(awardColumns) WHERE runner = $1 ORDER BY position", [runner]))
    }

    private static func awards(_ rows: PostgresResult) throws(StoreError) -> [StoredAward] {
        var awards: [StoredAward] = []
        for row in 0..<rows.rowCount {
            guard let tier = BadgeTier(rawValue: rows.text(row, 3)) else {
                throw StoreError(.corrupt, "award of run \(rows.text(row, 1)): unknown tier")
            }
            let badge = try BadgeColumns.badge(id: rows.text(row, 2), name: rows.text(row, 9),
                                               distance: try rows.double(row, 10), information: rows.text(row, 11))
            let award = BadgeAward(badge: badge, tier: tier, elapsed: try rows.double(row, 8), speed: try rows.double(row, 7),
                                   coordinate: Coordinate(latitude: try rows.double(row, 5),
                                                          longitude: try rows.double(row, 6)),
                                   timestamp: try rows.double(row, 4))
            awards.append(StoredAward(runner: rows.text(row, 0), runID: try rows.int64(row, 1), award: award))
        }
        return awards
    }
}
