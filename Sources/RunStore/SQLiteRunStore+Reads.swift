import CSQLite
import RunCore

extension SQLiteRunStore {
    /// The longest run of a runner that is not discarded, in metres (0 without runs), in one query.
    public func farthestDistance(of runner: String) throws(StoreError) -> Double {
        try reader.read { (database) throws(StoreError) -> Double in
            let select = try database.cachedStatement(
                "SELECT coalesce(max(distance), 0) FROM runs WHERE runner = ?1 AND status != 'discarded'")
            defer { select.reset() }
            try select.bind(runner, at: 1)
            return try select.step() ? select.double(at: 0) : 0
        }
    }

    /// The runner with this name, with its badge history.
    public func runner(named name: String) throws(StoreError) -> RunnerRecord? {
        try lookups.read { (database) throws(StoreError) -> RunnerRecord? in
            let select = try database.cachedStatement(
                "SELECT name, key_hash, created, private, privacy_zone FROM runners WHERE name = ?1")
            try select.bind(name, at: 1)
            guard try select.step() else { return nil }
            var runner = RunnerRecord(name: select.text(at: 0), keyHash: select.text(at: 1), created: select.double(at: 2),
                                      privacy: RunnerPrivacy(isPrivate: select.int64(at: 3) != 0, zone: select.double(at: 4)))
            select.reset()
            let records = try database.cachedStatement("""
                SELECT badge, earned_at, reference_speed, silver_at, gold_at, best_speed
                FROM badge_records WHERE runner = ?1
                """)
            try records.bind(name, at: 1)
            while try records.step() {
                runner.history.records[records.text(at: 0)] = BadgeHistory.Record(
                    earnedAt: records.double(at: 1), referenceSpeed: records.double(at: 2),
                    silverAt: records.optionalDouble(at: 3), goldAt: records.optionalDouble(at: 4),
                    bestSpeed: records.double(at: 5))
            }
            return runner
        }
    }

    /// A runner's runs in history (not the discarded ones), newest first.
    public func runs(of runner: String, offset: Int, limit: Int) throws(StoreError) -> [RunRecord] {
        try reader.read { (database) throws(StoreError) -> [RunRecord] in
            let select = try database.cachedStatement("""
                SELECT \(Self.runColumns) FROM runs WHERE runner = ?1 AND status != 'discarded'
                ORDER BY started DESC, id DESC LIMIT ?2 OFFSET ?3
                """)
            try select.bind(runner, at: 1)
            try select.bind(Int64(max(0, limit)), at: 2)
            try select.bind(Int64(max(0, offset)), at: 3)
            return try select.rows(Self.runRecord)
        }
    }

    /// A run in history with its splits, checkpoints and awards (nil for a discarded one).
    public func run(id: Int64) throws(StoreError) -> StoredRun? {
        try reader.read { (database) throws(StoreError) -> StoredRun? in
            let select = try database.cachedStatement(
                "SELECT \(Self.runColumns), splits, checkpoints FROM runs WHERE id = ?1 AND status != 'discarded'")
            try select.bind(id, at: 1)
            guard try select.step() else { return nil }
            let record = try Self.runRecord(select)
            let context = "run \(id)"
            let splits = try JSONColumn.decode([Split].self, from: select.text(at: Self.runColumnCount), context: context)
            let checkpoints = try JSONColumn.decode([CheckpointSplit].self, from: select.text(at: Self.runColumnCount + 1),
                                                    context: context)
            select.reset()
            let awards = try Self.awards(in: database, where: "run = ?1", { (statement) throws(StoreError) in try statement.bind(id, at: 1) })
            return StoredRun(record: record, splits: splits, checkpoints: checkpoints, awards: awards)
        }
    }

    /// Whose run `id` is (in history), with the runner's privacy: one statement, found or not.
    public func owner(ofRun id: Int64) throws(StoreError) -> RunOwner? {
        try reader.read { (database) throws(StoreError) -> RunOwner? in
            let select = try database.cachedStatement("""
                SELECT runs.runner, coalesce(runners.private, 0), coalesce(runners.privacy_zone, 0)
                FROM runs LEFT JOIN runners ON runners.name = runs.runner
                WHERE runs.id = ?1 AND runs.status != 'discarded'
                """)
            defer { select.reset() }
            try select.bind(id, at: 1)
            guard try select.step() else { return nil }
            return RunOwner(runner: select.text(at: 0),
                            privacy: RunnerPrivacy(isPrivate: select.int64(at: 1) != 0, zone: select.double(at: 2)))
        }
    }

    /// All fixes of a run, accepted and rejected, by sequence: straight from its `fix_chunks` rows (not
    /// through the `fixes` view, which is for the `sqlite3` shell).
    public func fixes(ofRun id: Int64) throws(StoreError) -> [StoredFix] {
        try reader.read { (database) throws(StoreError) -> [StoredFix] in
            let select = try database.cachedStatement("""
                SELECT first_sequence, count, base_time, fixes FROM fix_chunks WHERE run = ?1 ORDER BY first_sequence
                """)
            defer { select.reset() }
            try select.bind(id, at: 1)
            var fixes: [StoredFix] = []
            while try select.step() {
                let first = select.int64(at: 0)
                let count = Int(select.int64(at: 1))
                let base = select.int64(at: 2)
                try select.withTextBytes(at: 3) { (text) throws(StoreError) in
                    try FixChunkCoding.decode(text, run: id, firstSequence: first, count: count, base: base,
                                              into: &fixes)
                }
            }
            return fixes
        }
    }

    /// At most `limit` fixes of a run from sequence `first` on, by sequence: the rows from the one holding
    /// `first` (found through the primary key), decoded until the page is full.
    public func fixes(ofRun id: Int64, from first: Int64, limit: Int) throws(StoreError) -> [StoredFix] {
        guard limit > 0 else { return [] }
        return try reader.read { (database) throws(StoreError) -> [StoredFix] in
            let select = try database.cachedStatement("""
                SELECT first_sequence, count, base_time, fixes FROM fix_chunks
                WHERE run = ?1 AND first_sequence >= coalesce((SELECT first_sequence FROM fix_chunks
                    WHERE run = ?1 AND first_sequence <= ?2 ORDER BY first_sequence DESC LIMIT 1), ?2)
                ORDER BY first_sequence
                """)
            defer { select.reset() }
            try select.bind(id, at: 1)
            try select.bind(first, at: 2)
            var fixes: [StoredFix] = []
            fixes.reserveCapacity(limit)
            var row: [StoredFix] = []
            while fixes.count < limit, try select.step() {
                row.removeAll(keepingCapacity: true)
                let rowFirst = select.int64(at: 0)
                let count = Int(select.int64(at: 1))
                let base = select.int64(at: 2)
                try select.withTextBytes(at: 3) { (text) throws(StoreError) in
                    try FixChunkCoding.decode(text, run: id, firstSequence: rowFirst, count: count, base: base, into: &row)
                }
                for fix in row where fix.sequence >= first && fixes.count < limit { fixes.append(fix) }
            }
            return fixes
        }
    }

    /// All awards of a runner, in the order they were stored.
    public func awards(of runner: String) throws(StoreError) -> [StoredAward] {
        try reader.read { (database) throws(StoreError) -> [StoredAward] in
            try Self.awards(in: database, where: "runner = ?1", { (statement) throws(StoreError) in try statement.bind(runner, at: 1) })
        }
    }

    /// Runs still marked live.
    public func liveRuns() throws(StoreError) -> [RunRecord] {
        try reader.read { (database) throws(StoreError) -> [RunRecord] in
            try database.cachedStatement("SELECT \(Self.runColumns) FROM runs WHERE status = 'live' ORDER BY id")
                .rows(Self.runRecord)
        }
    }

    // MARK: Rows

    private static let rejectionColumns = FixRejection.allCases.map { "rejected_\($0.rawValue)" }
    private static let runColumns = (["id", "runner", "started", "ended", "distance", "elapsed", "moving_time", "status"]
        + rejectionColumns + ["elevation_gain", "elevation_loss"]).joined(separator: ", ")
    private static let runColumnCount = Int32(10 + FixRejection.allCases.count)

    private static func runRecord(_ row: Statement) throws(StoreError) -> RunRecord {
        let id = row.int64(at: 0)
        guard let status = RunStatus(rawValue: row.text(at: 7)) else {
            throw StoreError(.corrupt, "run \(id): unknown status \(row.text(at: 7))")
        }
        var rejections: [FixRejection: Int] = [:]
        for (offset, reason) in FixRejection.allCases.enumerated() {
            let count = Int(row.int64(at: Int32(8 + offset)))
            if count != 0 { rejections[reason] = count }
        }
        return RunRecord(id: id, runner: row.text(at: 1), started: row.double(at: 2), ended: row.optionalDouble(at: 3),
                         distance: row.double(at: 4), elapsed: row.double(at: 5), movingTime: row.double(at: 6),
                         status: status, rejections: rejections,
                         elevationGain: row.optionalDouble(at: Int32(8 + FixRejection.allCases.count)),
                         elevationLoss: row.optionalDouble(at: Int32(9 + FixRejection.allCases.count)))
    }

    private static func awards(in database: Database, where condition: String,
                               _ bind: (Statement) throws(StoreError) -> Void) throws(StoreError) -> [StoredAward] {
        let select = try database.cachedStatement("""
            SELECT runner, run, badge, tier, timestamp, latitude, longitude, speed, elapsed,
                badge_name, badge_distance, badge_information
            FROM badge_awards WHERE \(condition) ORDER BY rowid
            """)
        try bind(select)
        var awards: [StoredAward] = []
        while try select.step() {
            guard let tier = BadgeTier(rawValue: select.text(at: 3)) else {
                throw StoreError(.corrupt, "award of run \(select.int64(at: 1)): unknown tier")
            }
            let badge = try BadgeColumns.badge(id: select.text(at: 2), name: select.text(at: 9),
                                               distance: select.double(at: 10), information: select.text(at: 11))
            let award = BadgeAward(badge: badge, tier: tier, elapsed: select.double(at: 8), speed: select.double(at: 7),
                                   coordinate: Coordinate(latitude: select.double(at: 5), longitude: select.double(at: 6)),
                                   timestamp: select.double(at: 4))
            awards.append(StoredAward(runner: select.text(at: 0), runID: select.int64(at: 1), award: award))
        }
        return awards
    }
}

/// Rebuilds a ``Badge`` from its stored columns. Badge has no public memberwise initializer, but it is
/// Codable, so the stored fields go through its decoder.
package enum BadgeColumns {
    private struct Fields: Encodable {
        var id: String, name: String, distance: Double, information: String
    }

    package static func badge(id: String, name: String, distance: Double, information: String) throws(StoreError) -> Badge {
        let fields = Fields(id: id, name: name, distance: distance, information: information)
        let text = try JSONColumn.encode(fields)
        return try JSONColumn.decode(Badge.self, from: text, context: "badge \(id)")
    }
}
