import CSQLite
import RunCore

extension SQLiteRunStore {
    /// Where an imported run came from; nil for a run recorded live.
    public func importRecord(ofRun id: Int64) throws(StoreError) -> ImportRecord? {
        try reader.read { (database) throws(StoreError) -> ImportRecord? in
            let select = try database.cachedStatement("""
                SELECT runner, format, first_point_time, point_count, skipped_points, device_distance, pauses_before
                FROM run_imports WHERE run = ?1
                """)
            try select.bind(id, at: 1)
            // Reset when done: a statement left on a row keeps the read transaction (and its old snapshot) open.
            defer { select.reset() }
            guard try select.step() else { return nil }
            guard let format = ActivityFormat(rawValue: select.text(at: 1)) else {
                throw StoreError(.corrupt, "import of run \(id): unknown format \(select.text(at: 1))")
            }
            let pauses = try JSONColumn.decode([Int64].self, from: select.text(at: 6), context: "import of run \(id)")
            return ImportRecord(runID: id, runner: select.text(at: 0), format: format,
                                firstPointTime: select.double(at: 2), pointCount: Int(select.int64(at: 3)),
                                skippedPoints: Int(select.int64(at: 4)), deviceDistance: select.optionalDouble(at: 5),
                                pausesBefore: pauses)
        }
    }

    /// The run already imported from the same activity for `runner`, if any.
    public func importedRun(runner: String, firstPointTime: Double, pointCount: Int) throws(StoreError) -> Int64? {
        try reader.read { (database) throws(StoreError) -> Int64? in
            let select = try database.cachedStatement("""
                SELECT min(run) FROM run_imports WHERE runner = ?1 AND first_point_time = ?2 AND point_count = ?3
                """)
            try select.bind(runner, at: 1)
            try select.bind(firstPointTime, at: 2)
            try select.bind(Int64(pointCount), at: 3)
            defer { select.reset() }
            guard try select.step(), !select.isNull(at: 0) else { return nil }
            return select.int64(at: 0)
        }
    }

    /// Every device token not revoked.
    public func deviceTokens() throws(StoreError) -> [DeviceToken] { try unrevokedTokens() }

    /// Every share token not revoked.
    public func shareTokens() throws(StoreError) -> [ShareToken] { try unrevokedTokens() }

    /// The tokens of a kind not revoked, oldest first.
    private func unrevokedTokens<Token: StoredToken>() throws(StoreError) -> [Token] {
        try reader.read { (database) throws(StoreError) -> [Token] in
            try database.cachedStatement("""
                SELECT token_hash, runner, created, \(Token.storage.ownColumn) FROM \(Token.storage.table) \
                WHERE revoked IS NULL ORDER BY created
                """).rows(Token.init(row:))
        }
    }
}
