import Foundation
import RunCore
import RunStore

/// The run store in a PostgreSQL database, which several server processes (nodes) may share: the same
/// ``RunStore`` contract as ``SQLiteRunStore``, through the same write queue (one writer thread with its own
/// connection, batches of at most `maximumBatchSize` writes in one transaction each, acks only after
/// `COMMIT`, and the same bounded back-pressure), with separate connections for reads, for runner lookups and
/// for run ids. Select it with `moonrunner serve --db postgres://USER@HOST:PORT/DB`.
///
/// What makes sharing safe: run ids come from a database sequence (``allocateRunID()``); a runner name is
/// claimed by a unique insert (the first key committed stays); every write is idempotent; the schema is
/// migrated under an advisory lock, and a schema newer than this build is refused.
///
/// When the server is down, batches fail (``StoreError/isTransient`` is true for lost connections), nothing
/// is acknowledged, the writes stay queued and are retried as the write queue's policy says; each retry
/// reconnects, so writing resumes by itself when the server is back.
public final class PostgresRunStore: RunStore {
    /// The URL the store was opened with, its password hidden.
    public let location: String
    /// The configuration in force (`synchronous`, `busyTimeout` and the checkpoint settings are SQLite's: the
    /// server's own settings apply instead).
    public let configuration: StoreConfiguration
    private let queue: WriteQueue
    let reader: PostgresReadConnection
    /// A connection of its own for runner lookups, which the server makes on its loop: a long history read on
    /// `reader` never holds one up.
    let lookups: PostgresReadConnection
    private let runIDs: RunIDReserve

    /// Connects to `url` (`postgres://USER[:PASSWORD]@HOST:PORT/DB` or any libpq connection string), applies
    /// pending migrations and probes that the database can be written. Fails with a clear ``StoreError`` when
    /// the server cannot be reached, refuses the user, is read-only, or has a schema newer than this build.
    public init(url: String, configuration: StoreConfiguration = .init()) throws(StoreError) {
        let location = PostgresLocation.redacted(url)
        self.location = location
        self.configuration = configuration
        let writer: PostgresConnection
        do throws(StoreError) {
            writer = try PostgresConnection(url: url)
            try writer.migrate()
            // The write probe: a real write, so a read-only server (a standby) shows up now.
            try writer.query("""
                INSERT INTO store_meta (key, value) VALUES ('last_opened', $1)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, [PostgresValue.double(Date().timeIntervalSince1970)])
            reader = try PostgresReadConnection(url: url)
            lookups = try PostgresReadConnection(url: url)
            // The first block now (the caller is not on an event loop yet), the next ones ahead, off the loop.
            let blockSize = max(2, configuration.runIDBlockSize)
            runIDs = try RunIDReserve(PostgresRunIDs(url: url), firstBlock: blockSize, maximumBlock: blockSize,
                                      reservingNow: true, name: "RunStore run ids")
        } catch {
            throw Self.explain(error, location: location)
        }
        let (reader, lookups, runIDs) = (reader, lookups, runIDs)
        let sink = PostgresBatchSink(connection: writer) {
            reader.serverIsBack()
            lookups.serverIsBack()
            runIDs.databaseIsBack()
        }
        queue = WriteQueue(configuration: configuration, sink: sink, label: location)
    }

    deinit {
        queue.close()
        runIDs.close()  // its thread would otherwise keep it, and its connection, forever
    }

    /// Turns an error at open into one that says what is wrong in words a user can act on.
    private static func explain(_ error: StoreError, location: String) -> StoreError {
        let reason: String
        switch error.kind {
        case .unavailable:
            reason = "the server cannot be reached, or the database does not exist"
        case .newerSchema:
            reason = "its schema is newer than this build"
        case .refused:
            reason = "the server refused the user (check USER, the password, and pg_hba.conf)"
        case .readOnly:
            reason = "the server is read-only (a standby?); the store needs to write"
        case .busy:
            reason = "the server is busy (too many connections?)"
        default:
            reason = "the database cannot be used"
        }
        var explained = error
        explained.message = "cannot open run store \(location): \(reason) — \(error.message)"
        return explained
    }

    // MARK: Writes

    /// A new run id from the database's sequence: unique across nodes and restarts.
    public func allocateRunID() throws(StoreError) -> Int64 {
        try runIDs.allocate()
    }

    /// Queues a write for the writer thread.
    public func submit(_ write: StoreWrite) { queue.submit(write) }

    /// Sets the function called on the writer thread after each batch.
    public func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void) {
        queue.setCommitHandler(handler)
    }

    /// Writes submitted and not committed yet.
    public var pendingWriteCount: Int { queue.pendingWriteCount }

    /// Four sockets to the server (writer, reader, lookups, run ids), and as many again while each reconnects.
    public var descriptorsNeeded: Int { 8 }

    /// Writes kept in memory after failed batches, waiting to be retried.
    public var retainedWriteCount: Int { queue.retainedWriteCount }

    /// Blocks until everything submitted so far has been committed or has failed.
    public func flush() { queue.flush() }
    /// See ``RunStore/flushCommitted()``.
    public func flushCommitted() throws(StoreError) { try queue.flushCommitted() }

    /// Flushes, stops the writer and the run-id thread, and closes the connections.
    public func close() {
        queue.close()
        runIDs.close()
        reader.close()
        lookups.close()
    }
}
