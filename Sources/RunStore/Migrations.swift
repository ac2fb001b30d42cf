import CSQLite
import Foundation

/// One named, ordered step of the schema. Applied once per database; recorded in `schema_migrations`.
struct Migration: MigrationStep, Sendable {
    /// A stable identifier; never renamed once released.
    let id: String
    /// The SQL to run, inside the migration transaction.
    let sql: String
    /// Work SQL alone cannot do (e.g. re-encoding rows), run after `sql` in the same transaction.
    let step: (@Sendable (Database) throws(StoreError) -> Void)?

    init(id: String, sql: String, step: (@Sendable (Database) throws(StoreError) -> Void)? = nil) {
        self.id = id
        self.sql = sql
        self.step = step
    }
}

extension Migration {
    /// Every migration, in the order they are applied. Append only; the schema is documented in README.md.
    static let all: [Migration] = [
        Migration(id: "2025-01-001-initial", sql: """
            CREATE TABLE runners (
                name TEXT PRIMARY KEY NOT NULL,
                key_hash TEXT NOT NULL,
                created REAL NOT NULL
            );
            CREATE TABLE runs (
                id INTEGER PRIMARY KEY,
                runner TEXT NOT NULL REFERENCES runners(name),
                started REAL NOT NULL,
                ended REAL,
                distance REAL NOT NULL DEFAULT 0,
                elapsed REAL NOT NULL DEFAULT 0,
                moving_time REAL NOT NULL DEFAULT 0,
                status TEXT NOT NULL DEFAULT 'live'
                    CHECK (status IN ('live', 'saved', 'discarded', 'ended_by_timeout')),
                rejected_inaccurate INTEGER NOT NULL DEFAULT 0,
                rejected_invalid INTEGER NOT NULL DEFAULT 0,
                rejected_duplicate INTEGER NOT NULL DEFAULT 0,
                rejected_out_of_order INTEGER NOT NULL DEFAULT 0,
                rejected_future INTEGER NOT NULL DEFAULT 0,
                rejected_stale INTEGER NOT NULL DEFAULT 0,
                rejected_jump INTEGER NOT NULL DEFAULT 0,
                splits TEXT NOT NULL DEFAULT '[]',
                checkpoints TEXT NOT NULL DEFAULT '[]'
            );
            CREATE INDEX runs_by_runner ON runs(runner, started DESC, id DESC);
            CREATE INDEX live_runs ON runs(id) WHERE status = 'live';
            CREATE TABLE fixes (
                run INTEGER NOT NULL REFERENCES runs(id),
                sequence INTEGER NOT NULL,
                latitude REAL,
                longitude REAL,
                accuracy REAL,
                timestamp REAL,
                received REAL NOT NULL,
                rejection TEXT,
                PRIMARY KEY (run, sequence)
            ) WITHOUT ROWID;
            CREATE TABLE badge_awards (
                runner TEXT NOT NULL REFERENCES runners(name),
                run INTEGER NOT NULL REFERENCES runs(id),
                badge TEXT NOT NULL,
                tier TEXT NOT NULL CHECK (tier IN ('earned', 'silver', 'gold', 'best')),
                timestamp REAL NOT NULL,
                latitude REAL NOT NULL,
                longitude REAL NOT NULL,
                speed REAL NOT NULL,
                elapsed REAL NOT NULL,
                badge_name TEXT NOT NULL,
                badge_distance REAL NOT NULL,
                badge_information TEXT NOT NULL,
                UNIQUE (run, badge, tier)
            );
            CREATE INDEX badge_awards_by_runner ON badge_awards(runner);
            CREATE TABLE badge_records (
                runner TEXT NOT NULL REFERENCES runners(name),
                badge TEXT NOT NULL,
                earned_at REAL NOT NULL,
                reference_speed REAL NOT NULL,
                silver_at REAL,
                gold_at REAL,
                best_speed REAL NOT NULL,
                PRIMARY KEY (runner, badge)
            ) WITHOUT ROWID;
            CREATE TABLE store_meta (
                key TEXT PRIMARY KEY NOT NULL,
                value
            ) WITHOUT ROWID;
            """),
        // Run ids come from the database, not from a counter in one process (see RunIDSequence).
        Migration(id: "2026-12-001-run-id-sequence", sql: """
            INSERT OR IGNORE INTO store_meta (key, value)
                SELECT 'next_run_id', coalesce(max(id), 0) + 1 FROM runs;
            """),
        // Imported runs: the activity's identity (for refusing a second import of the same file), the device's
        // own distance (TCX DistanceMeters) beside the engine's, and where the device was paused.
        Migration(id: "2026-12-014-run-imports", sql: """
            CREATE TABLE run_imports (
                run INTEGER PRIMARY KEY NOT NULL REFERENCES runs(id),
                runner TEXT NOT NULL REFERENCES runners(name),
                format TEXT NOT NULL CHECK (format IN ('gpx', 'tcx')),
                first_point_time REAL NOT NULL,
                point_count INTEGER NOT NULL,
                skipped_points INTEGER NOT NULL DEFAULT 0,
                device_distance REAL,
                pauses_before TEXT NOT NULL DEFAULT '[]'
            );
            CREATE INDEX run_imports_by_activity ON run_imports(runner, first_point_time, point_count);
            """),
        // Phone apps posting positions over HTTP: each device token's hash, its runner, and its revocation.
        Migration(id: "2026-12-010-device-tokens", sql: """
            CREATE TABLE device_tokens (
                token_hash TEXT PRIMARY KEY NOT NULL,
                runner TEXT NOT NULL REFERENCES runners(name),
                created REAL NOT NULL,
                revoked REAL
            ) WITHOUT ROWID;
            CREATE INDEX device_tokens_by_runner ON device_tokens(runner);
            """),
        // Fixes many to a row (see FixChunkCoding): the row-per-fix table cost a B-tree insert per fix. The old
        // rows are re-encoded into chunks (in Swift: SQLite's JSON functions print doubles to 15 digits, which
        // would not give the same fixes back), then the table gives way to a view of the same name and columns.
        Migration(id: "2026-12-020-fix-chunks", sql: FixChunkSchema.createTable,
                  step: { (database) throws(StoreError) in try FixChunkSchema.moveRows(in: database) }),
        // Privacy: private runners, privacy zones (metres hidden at each end of a run), share links' token hashes.
        Migration(id: "2026-12-030-privacy", sql: """
            ALTER TABLE runners ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE runners ADD COLUMN privacy_zone REAL NOT NULL DEFAULT 0;
            CREATE TABLE share_tokens (
                token_hash TEXT PRIMARY KEY NOT NULL,
                runner TEXT NOT NULL REFERENCES runners(name),
                created REAL NOT NULL,
                expires REAL NOT NULL,
                revoked REAL
            ) WITHOUT ROWID;
            CREATE INDEX share_tokens_by_runner ON share_tokens(runner);
            """),
        // The runner's name for each phone (`device:LABEL`), shown in `device:list` and on the runner's page.
        Migration(id: "2027-01-010-device-labels", sql: """
            ALTER TABLE device_tokens ADD COLUMN label TEXT;
            """),
        // Elevation: each run's gain and loss in metres (NULL when no fix had an altitude), and the `fixes` view's
        // altitude column (the chunks hold it as a fix's seventh element; older chunks have none, so NULL).
        Migration(id: "2027-01-027-elevation", sql: """
            ALTER TABLE runs ADD COLUMN elevation_gain REAL;
            ALTER TABLE runs ADD COLUMN elevation_loss REAL;
            """, step: { (database) throws(StoreError) in try FixChunkSchema.replaceView(in: database) }),
        // Race courses (`moonrunner course add`): the path as JSON `[[lat, lon], …]`, the named points as JSON
        // `[{"name", "lat", "lon"}, …]` in the file's order.
        Migration(id: "2027-02-029-courses", sql: """
            CREATE TABLE courses (
                name TEXT PRIMARY KEY,
                created REAL NOT NULL,
                path TEXT NOT NULL,
                points TEXT NOT NULL
            );
            """),
    ]
}

extension Database {
    /// Applies the migrations not yet recorded, in order, in one transaction. Returns the ids applied now.
    @discardableResult
    func migrate(_ migrations: [Migration] = Migration.all) throws(StoreError) -> [String] {
        try transaction(.immediate) { () throws(StoreError) -> [String] in
            try execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    id TEXT PRIMARY KEY NOT NULL,
                    applied_at REAL NOT NULL
                )
                """)
            let done = Set(try prepare("SELECT id FROM schema_migrations").rows { $0.text(at: 0) })
            let record = try prepare("INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)")
            return try migrations.apply(skipping: done, advice: "use that build, or a copy of the file") {
                (migration) throws(StoreError) in
                try execute(migration.sql)
                try migration.step?(self)
            } record: { (id) throws(StoreError) in
                try record.bind(id, at: 1)
                try record.bind(Date().timeIntervalSince1970, at: 2)
                try record.run()
            }
        }
    }

    /// The ids of the migrations applied to this database, in the order they were applied.
    func appliedMigrations() throws(StoreError) -> [String] {
        try prepare("SELECT id FROM schema_migrations ORDER BY rowid").rows { $0.text(at: 0) }
    }
}
