import Foundation
import RunStore

/// One named, ordered step of the PostgreSQL schema, applied once per database and recorded in
/// `schema_migrations` (the same rule as the SQLite store's migrations; the steps are PostgreSQL's own).
struct PostgresMigration: MigrationStep, Sendable {
    /// A stable identifier; never renamed once released.
    let id: String
    /// The statements to run, inside the migration transaction. Constant SQL only.
    let sql: StaticString
}

extension PostgresMigration {
    /// Every migration, in the order they are applied. Append only.
    ///
    /// The tables and columns are the SQLite store's (README.md, "The database"), with PostgreSQL types. There
    /// are no foreign keys, as in effect in SQLite (which does not enforce them by default): a batch may hold a
    /// fix before its run's row, and the contract allows fixes of runs never started.
    static let all: [PostgresMigration] = [
        PostgresMigration(id: "2027-01-001-initial", sql: """
            CREATE TABLE runners (
                name TEXT PRIMARY KEY,
                key_hash TEXT NOT NULL,
                created DOUBLE PRECISION NOT NULL
            );
            CREATE TABLE runs (
                id BIGINT PRIMARY KEY,
                runner TEXT NOT NULL,
                started DOUBLE PRECISION NOT NULL,
                ended DOUBLE PRECISION,
                distance DOUBLE PRECISION NOT NULL DEFAULT 0,
                elapsed DOUBLE PRECISION NOT NULL DEFAULT 0,
                moving_time DOUBLE PRECISION NOT NULL DEFAULT 0,
                status TEXT NOT NULL DEFAULT 'live'
                    CHECK (status IN ('live', 'saved', 'discarded', 'ended_by_timeout')),
                rejected_inaccurate BIGINT NOT NULL DEFAULT 0,
                rejected_invalid BIGINT NOT NULL DEFAULT 0,
                rejected_duplicate BIGINT NOT NULL DEFAULT 0,
                rejected_out_of_order BIGINT NOT NULL DEFAULT 0,
                rejected_future BIGINT NOT NULL DEFAULT 0,
                rejected_stale BIGINT NOT NULL DEFAULT 0,
                rejected_jump BIGINT NOT NULL DEFAULT 0,
                splits TEXT NOT NULL DEFAULT '[]',
                checkpoints TEXT NOT NULL DEFAULT '[]'
            );
            CREATE INDEX runs_by_runner ON runs (runner, started DESC, id DESC);
            CREATE INDEX live_runs ON runs (id) WHERE status = 'live';
            -- Run ids for every node sharing the database: nextval never hands one out twice.
            CREATE SEQUENCE run_ids;
            CREATE TABLE fixes (
                run BIGINT NOT NULL,
                sequence BIGINT NOT NULL,
                latitude DOUBLE PRECISION,
                longitude DOUBLE PRECISION,
                accuracy DOUBLE PRECISION,
                timestamp DOUBLE PRECISION,
                received DOUBLE PRECISION NOT NULL,
                rejection TEXT,
                PRIMARY KEY (run, sequence)
            );
            CREATE TABLE badge_awards (
                position BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                runner TEXT NOT NULL,
                run BIGINT NOT NULL,
                badge TEXT NOT NULL,
                tier TEXT NOT NULL CHECK (tier IN ('earned', 'silver', 'gold', 'best')),
                timestamp DOUBLE PRECISION NOT NULL,
                latitude DOUBLE PRECISION NOT NULL,
                longitude DOUBLE PRECISION NOT NULL,
                speed DOUBLE PRECISION NOT NULL,
                elapsed DOUBLE PRECISION NOT NULL,
                badge_name TEXT NOT NULL,
                badge_distance DOUBLE PRECISION NOT NULL,
                badge_information TEXT NOT NULL,
                UNIQUE (run, badge, tier)
            );
            CREATE INDEX badge_awards_by_runner ON badge_awards (runner, position);
            CREATE TABLE badge_records (
                runner TEXT NOT NULL,
                badge TEXT NOT NULL,
                earned_at DOUBLE PRECISION NOT NULL,
                reference_speed DOUBLE PRECISION NOT NULL,
                silver_at DOUBLE PRECISION,
                gold_at DOUBLE PRECISION,
                best_speed DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (runner, badge)
            );
            CREATE TABLE run_imports (
                run BIGINT PRIMARY KEY,
                runner TEXT NOT NULL,
                format TEXT NOT NULL CHECK (format IN ('gpx', 'tcx')),
                first_point_time DOUBLE PRECISION NOT NULL,
                point_count BIGINT NOT NULL,
                skipped_points BIGINT NOT NULL DEFAULT 0,
                device_distance DOUBLE PRECISION,
                pauses_before TEXT NOT NULL DEFAULT '[]'
            );
            CREATE INDEX run_imports_by_activity ON run_imports (runner, first_point_time, point_count);
            CREATE TABLE device_tokens (
                token_hash TEXT PRIMARY KEY,
                runner TEXT NOT NULL,
                created DOUBLE PRECISION NOT NULL,
                revoked DOUBLE PRECISION
            );
            CREATE INDEX device_tokens_by_runner ON device_tokens (runner);
            CREATE TABLE store_meta (
                key TEXT PRIMARY KEY,
                value TEXT
            );
            """),
        // Privacy: private runners, privacy zones, share links' token hashes (as SQLite's 2026-12-030-privacy).
        PostgresMigration(id: "2027-01-002-privacy", sql: """
            ALTER TABLE runners ADD COLUMN private BOOLEAN NOT NULL DEFAULT false;
            ALTER TABLE runners ADD COLUMN privacy_zone DOUBLE PRECISION NOT NULL DEFAULT 0;
            CREATE TABLE share_tokens (
                token_hash TEXT PRIMARY KEY,
                runner TEXT NOT NULL,
                created DOUBLE PRECISION NOT NULL,
                expires DOUBLE PRECISION NOT NULL,
                revoked DOUBLE PRECISION
            );
            CREATE INDEX share_tokens_by_runner ON share_tokens (runner);
            """),
        // The runner's name for each phone (as SQLite's 2027-01-010-device-labels).
        PostgresMigration(id: "2027-01-010-device-labels", sql: """
            ALTER TABLE device_tokens ADD COLUMN label TEXT;
            """),
        // Elevation (as SQLite's 2027-01-027-elevation): each fix's altitude, each run's gain and loss in metres,
        // NULL where unknown.
        PostgresMigration(id: "2027-01-027-elevation", sql: """
            ALTER TABLE fixes ADD COLUMN altitude DOUBLE PRECISION;
            ALTER TABLE runs ADD COLUMN elevation_gain DOUBLE PRECISION;
            ALTER TABLE runs ADD COLUMN elevation_loss DOUBLE PRECISION;
            """),
        // Race courses (as SQLite's 2027-02-029-courses): the path and the named points as JSON text.
        PostgresMigration(id: "2027-02-029-courses", sql: """
            CREATE TABLE courses (
                name TEXT PRIMARY KEY,
                created DOUBLE PRECISION NOT NULL,
                path TEXT NOT NULL,
                points TEXT NOT NULL
            );
            """),
    ]
}

extension PostgresConnection {
    /// Applies the migrations not yet recorded, in order, in one transaction; returns the ids applied now.
    /// Refuses a database migrated by a newer build (a migration it does not know). Nodes starting together
    /// take turns: the transaction holds an advisory lock, so one migrates and the others find it done.
    @discardableResult
    func migrate(_ migrations: [PostgresMigration] = PostgresMigration.all) throws(StoreError) -> [String] {
        try execute("BEGIN")
        do throws(StoreError) {
            // Any constant will do: it names "the moonrunner schema" among advisory locks of this database.
            try execute("SELECT pg_advisory_xact_lock(4242001)")
            try execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    id TEXT PRIMARY KEY,
                    applied_at DOUBLE PRECISION NOT NULL,
                    position BIGINT GENERATED ALWAYS AS IDENTITY
                )
                """)
            let done = Set(try query("SELECT id FROM schema_migrations").rows { $0.text($1, 0) })
            let applied = try migrations.apply(skipping: done, advice: "use that build, or another database") {
                (migration) throws(StoreError) in
                try execute(migration.sql)
            } record: { (id) throws(StoreError) in
                try query("INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2::double precision)",
                          [id, PostgresValue.double(Date().timeIntervalSince1970)])
            }
            let commit = try execute("COMMIT")
            guard commit.commandStatus == "COMMIT" else {
                throw StoreError(.unavailable, "the migration transaction was rolled back", underlying: .postgres(sqlState: "40000"))
            }
            return applied
        } catch {
            if isConnected && isInTransaction { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// The ids of the migrations applied to this database, in the order they were applied.
    func appliedMigrations() throws(StoreError) -> [String] {
        try query("SELECT id FROM schema_migrations ORDER BY position").rows { $0.text($1, 0) }
    }
}
