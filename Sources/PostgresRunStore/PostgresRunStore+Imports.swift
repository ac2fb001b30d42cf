import RunCore
import RunStore

extension PostgresRunStore {
    /// Where an imported run came from; nil for a run recorded live.
    public func importRecord(ofRun id: Int64) throws(StoreError) -> ImportRecord? {
        try reader.read { (connection) throws(StoreError) -> ImportRecord? in
            let rows = try connection.query("""
                SELECT runner, format, first_point_time, point_count, skipped_points, device_distance, pauses_before
                FROM run_imports WHERE run = $1::bigint
                """, [String(id)])
            guard rows.rowCount > 0 else { return nil }
            guard let format = ActivityFormat(rawValue: rows.text(0, 1)) else {
                throw StoreError(.corrupt, "import of run \(id): unknown format \(rows.text(0, 1))")
            }
            let pauses = try JSONColumn.decode([Int64].self, from: rows.text(0, 6), context: "import of run \(id)")
            return ImportRecord(runID: id, runner: rows.text(0, 0), format: format,
                                firstPointTime: try rows.double(0, 2), pointCount: Int(try rows.int64(0, 3)),
                                skippedPoints: Int(try rows.int64(0, 4)), deviceDistance: try rows.optionalDouble(0, 5),
                                pausesBefore: pauses)
        }
    }

    /// The run already imported from the same activity for `runner`, if any.
    public func importedRun(runner: String, firstPointTime: Double, pointCount: Int) throws(StoreError) -> Int64? {
        try reader.read { (connection) throws(StoreError) -> Int64? in
            let rows = try connection.query("""
                SELECT min(run) FROM run_imports
                WHERE runner = $1 AND first_point_time = $2::double precision AND point_count = $3::bigint
                """, [runner, PostgresValue.double(firstPointTime), String(pointCount)])
            guard rows.rowCount > 0, !rows.isNull(0, 0) else { return nil }
            return try rows.int64(0, 0)
        }
    }

    /// Every device token not revoked.
    public func deviceTokens() throws(StoreError) -> [DeviceToken] {
        try reader.read { (connection) throws(StoreError) -> [DeviceToken] in
            try connection.query(
                "SELECT token_hash, runner, created, label FROM device_tokens WHERE revoked IS NULL ORDER BY created"
            ).rows { (rows, row) throws(StoreError) in
                DeviceToken(hash: rows.text(row, 0), runner: rows.text(row, 1),
                            created: try rows.double(row, 2), label: rows.optionalText(row, 3))
            }
        }
    }

    /// Every share token not revoked.
    public func shareTokens() throws(StoreError) -> [ShareToken] {
        try reader.read { (connection) throws(StoreError) -> [ShareToken] in
            try connection.query(
                "SELECT token_hash, runner, created, expires FROM share_tokens WHERE revoked IS NULL ORDER BY created"
            ).rows { (rows, row) throws(StoreError) in
                ShareToken(hash: rows.text(row, 0), runner: rows.text(row, 1), created: try rows.double(row, 2),
                           expires: try rows.double(row, 3))
            }
        }
    }
}
