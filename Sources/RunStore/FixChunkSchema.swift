import CSQLite
import RunCore

/// The `fix_chunks` table, the `fixes` view over it, and the move from the row-per-fix `fixes` table.
enum FixChunkSchema {
    /// Fixes of one run per row, with consecutive sequences from `first_sequence`; `fixes` is their JSON text
    /// (see ``FixChunkCoding``), their times offsets from `base_time`. Rows are kept small enough to stay inside
    /// their page of the `WITHOUT ROWID` B-tree (see ``FixChunkCoding/textLimit(pageSize:)``).
    static let createTable = """
        CREATE TABLE fix_chunks (
            run INTEGER NOT NULL REFERENCES runs(id),
            first_sequence INTEGER NOT NULL,
            count INTEGER NOT NULL CHECK (count > 0),
            base_time INTEGER NOT NULL,
            fixes TEXT NOT NULL,
            PRIMARY KEY (run, first_sequence)
        ) WITHOUT ROWID;
        """

    /// One row per fix with the columns of the old `fixes` table and the altitude, for the `sqlite3` shell and
    /// other tools (the store itself reads `fix_chunks`). `CAST … AS REAL` keeps whole numbers REAL, as the
    /// table's were.
    static let createView = """
        CREATE VIEW fixes (run, sequence, latitude, longitude, accuracy, timestamp, received, rejection, altitude) AS
            SELECT chunk.run, chunk.first_sequence + fix.key,
                CAST(json_extract(fix.value, '$[0]') AS REAL),
                CAST(json_extract(fix.value, '$[1]') AS REAL),
                CAST(json_extract(fix.value, '$[2]') AS REAL),
                CAST(CASE json_type(fix.value, '$[3]') WHEN 'array' THEN json_extract(fix.value, '$[3][0]')
                     ELSE chunk.base_time + json_extract(fix.value, '$[3]') END AS REAL),
                CAST(CASE json_type(fix.value, '$[4]') WHEN 'array' THEN json_extract(fix.value, '$[4][0]')
                     ELSE chunk.base_time + json_extract(fix.value, '$[4]') END AS REAL),
                json_extract(fix.value, '$[5]'),
                CAST(json_extract(fix.value, '$[6]') AS REAL)
            FROM fix_chunks AS chunk, json_each(chunk.fixes) AS fix;
        """

    /// Replaces the `fixes` view with the one of ``createView`` (when `fixes` is still the old table, the move
    /// to chunks has not run yet and will make the view).
    static func replaceView(in database: Database) throws(StoreError) {
        let kind = try database.prepare("SELECT type FROM sqlite_schema WHERE name = 'fixes'")
        let isView = try kind.step() && kind.text(at: 0) == "view"
        kind.reset()
        guard isView else { return }
        try database.execute("DROP VIEW fixes")
        try database.execute(createView)
    }

    /// Moves the rows of the row-per-fix table into chunks (runs in sequence order, consecutive sequences
    /// sharing a row), then replaces the table with the view.
    static func moveRows(in database: Database) throws(StoreError) {
        let limit = FixChunkCoding.textLimit(pageSize: Int(try database.integer("PRAGMA page_size") ?? 4096))
        let select = try database.prepare("""
            SELECT run, sequence, latitude, longitude, accuracy, timestamp, received, rejection
            FROM fixes ORDER BY run, sequence
            """)
        let insert = try FixChunkWriter.prepareChunkInsert(on: database)
        let text = ChunkText()
        var run: Int64 = 0
        var first: Int64 = 0
        var base: Int64 = 0
        var count = 0

        func flush() throws(StoreError) {
            guard count > 0 else { return }
            text.append(UInt8(ascii: "]"))
            try FixChunkWriter.insertChunk(text, run: run, first: first, count: count, base: base, with: insert)
            text.removeAll()
            count = 0
        }

        while try select.step() {
            let rowRun = select.int64(at: 0)
            let sequence = select.int64(at: 1)
            // SQLite stored NaN as NULL; the chunk writes it as null, which reads back as NaN.
            let fields = FixChunkCoding.Fields(
                latitude: select.optionalDouble(at: 2) ?? .nan, longitude: select.optionalDouble(at: 3) ?? .nan,
                accuracy: select.optionalDouble(at: 4) ?? .nan, timestamp: select.optionalDouble(at: 5) ?? .nan,
                received: select.double(at: 6), rejection: select.optionalText(at: 7))
            if count > 0, rowRun != run || sequence != first &+ Int64(count) {
                try flush()
            }
            if count > 0 {
                let mark = text.count
                text.append(UInt8(ascii: ","))
                FixChunkCoding.append(fields, base: base, to: text)
                if text.count + 1 <= limit {
                    count += 1
                    continue
                }
                text.count = mark
                try flush()
            }
            run = rowRun
            first = sequence
            base = FixChunkCoding.baseTime(for: StoredFix(
                runID: rowRun, sequence: sequence,
                fix: Fix(latitude: 0, longitude: 0, accuracy: 0, timestamp: fields.timestamp), received: fields.received))
            text.append(UInt8(ascii: "["))
            FixChunkCoding.append(fields, base: base, to: text)
            count = 1
        }
        try flush()
        select.reset()  // a statement still open on the table would make DROP TABLE fail
        try database.execute("DROP TABLE fixes")
        try database.execute(createView)
    }
}
