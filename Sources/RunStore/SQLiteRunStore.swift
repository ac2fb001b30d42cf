import CSQLite
import Foundation
import Locking
import RunCore
import Synchronization

/// The run store in an SQLite file: WAL journal, one writer thread with its own connection, and a second
/// connection for reads guarded by a lock. The tables are documented in README.md ("The database").
public final class SQLiteRunStore: RunStore {
    /// The path or `file:` URI the store was opened with.
    public let path: String
    /// The configuration in force.
    public let configuration: StoreConfiguration
    private let queue: WriteQueue
    let reader: ReadConnection
    /// A read connection of its own for runner lookups, which the server's loop makes: a slow history read on
    /// `reader` never holds one up.
    let lookups: ReadConnection
    let runIDs: RunIDReserve

    /// Opens or creates the database at `path` (a file path or a `file:` URI), applies pending migrations and
    /// probes that it can be read and written. Fails with a clear ``StoreError`` for a corrupt or foreign file,
    /// a database locked by another process, a read-only file or directory, or a full disk.
    public init(path: String, configuration: StoreConfiguration = .init()) throws(StoreError) {
        guard !path.isEmpty, path != ":memory:" else {
            throw StoreError(.misuse,
                             "SQLiteRunStore needs a file; use MemoryRunStore for an in-memory store")
        }
        self.path = path
        self.configuration = configuration
        let writer: Database
        do throws(StoreError) {
            writer = try Database(path: path, busyTimeout: configuration.busyTimeout)
            try Self.prepare(writer, configuration: configuration)
        } catch {
            throw Self.explain(error, path: path, configuration: configuration)
        }
        let readConnection: Database
        do throws(StoreError) {
            readConnection = try Database(path: path, busyTimeout: configuration.busyTimeout)
            try readConnection.execute("PRAGMA query_only = ON")
        } catch {
            throw Self.explain(error, path: path, configuration: configuration)
        }
        do throws(StoreError) {
            runIDs = try RunIDReserve(RunIDSequence(path: path, configuration: configuration), firstBlock: 1,
                                      maximumBlock: configuration.runIDBlockSize, reservingNow: false,
                                      name: "RunStore run ids")
        } catch {
            throw Self.explain(error, path: path, configuration: configuration)
        }
        reader = ReadConnection(database: readConnection)
        do throws(StoreError) {
            let lookupConnection = try Database(path: path, busyTimeout: configuration.busyTimeout)
            try lookupConnection.execute("PRAGMA query_only = ON")
            lookups = ReadConnection(database: lookupConnection)
        } catch {
            throw Self.explain(error, path: path, configuration: configuration)
        }
        var checkpointer: Checkpointer?
        if configuration.checkpointsInBackground {
            checkpointer = try Checkpointer(path: path, configuration: configuration)
            sqlite3_wal_autocheckpoint(writer.handle, Int32(clamping: configuration.writerCheckpointPages))
        }
        var afterCommit: (@Sendable () -> Void)?
        var beforeClose: (@Sendable () -> Void)?
        if let checkpointer {
            afterCommit = { checkpointer.noteCommit() }
            beforeClose = { checkpointer.stop() }
        }
        let sink: SQLiteBatchSink
        do throws(StoreError) {
            sink = try SQLiteBatchSink(database: writer, afterCommit: afterCommit, beforeClose: beforeClose)
        } catch {
            checkpointer?.stop()  // its thread would otherwise outlive the store that never opened
            throw error
        }
        queue = WriteQueue(configuration: configuration, sink: sink, label: path)
    }

    deinit {
        runIDs.close()  // its refill thread, if it started, would otherwise keep it, and its connection, forever
        queue.close()
    }

    /// Checks the file and brings the schema up to date, on the write connection.
    private static func prepare(_ database: Database, configuration: StoreConfiguration) throws(StoreError) {
        // Reading the schema version fails at once for a file that is not a database (SQLITE_NOTADB), and
        // after the busy timeout when another process holds an exclusive lock.
        _ = try database.integer("PRAGMA schema_version")
        if configuration.checksIntegrityAtOpen {
            let check = try database.prepare("PRAGMA quick_check")
            var problems: [String] = []
            while try check.step() { problems.append(check.text(at: 0)) }
            guard problems == ["ok"] else {
                throw StoreError(.corrupt,
                                 "integrity check failed: \(problems.prefix(3).joined(separator: "; "))")
            }
        }
        let journal = try database.text("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = \(configuration.synchronous.rawValue)")
        if let pages = configuration.maximumPageCount { _ = try database.integer("PRAGMA max_page_count = \(pages)") }
        try database.migrate()
        // The write probe: a real write, committed, so a read-only file or a full disk shows up now.
        try database.transaction(.immediate) { () throws(StoreError) in
            let probe = try database.prepare(
                "INSERT OR REPLACE INTO store_meta (key, value) VALUES ('last_opened', ?1)")
            try probe.bind(Date().timeIntervalSince1970, at: 1)
            try probe.run()
        }
        guard journal?.lowercased() == "wal" else {
            throw StoreError(.unavailable, "cannot switch to WAL journal mode (got \(journal ?? "none"))")
        }
    }

    /// Turns an error at open into one that says what is wrong in words a user can act on.
    private static func explain(_ error: StoreError, path: String, configuration: StoreConfiguration) -> StoreError {
        let reason: String
        switch error.kind {
        case .newerSchema:
            reason = "its schema is newer than this build"
        case .busy:
            reason = "the database is locked by another process or connection (waited \(configuration.busyTimeout) s)"
        case .readOnly:
            reason = "the database is read-only (file, directory or medium); the store needs to write"
        case .corrupt:
            reason = "the file is not an SQLite database or is corrupt"
        case .full:
            reason = "the disk (or the configured size cap) is full"
        case .unavailable where error.sqlitePrimaryCode == SQLITE_IOERR:
            reason = "an I/O error occurred"
        case .unavailable:
            reason = "the file cannot be opened (missing directory, no permission, or read-only directory)"
        default:
            reason = "the database cannot be used"
        }
        var explained = error
        explained.message = "cannot open run store \(path): \(reason) — \(error.message)"
        return explained
    }

    // MARK: Writes

    /// A new run id from the database's sequence (see ``RunIDSequence``): unique across processes, reserved
    /// ahead (see ``RunIDReserve``).
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

    /// Five connections (writer, reader, lookups, run ids, checkpointer), each with the file, its `-wal` and its
    /// `-shm` open, and one for a sort's temporary file.
    public var descriptorsNeeded: Int { 5 * 3 + 1 }

    /// Blocks until everything submitted so far has been committed or has failed.
    public func flush() { queue.flush() }
    /// See ``RunStore/flushCommitted()``.
    public func flushCommitted() throws(StoreError) { try queue.flushCommitted() }

    /// Flushes, stops the writer, checkpoints the WAL and closes the connections.
    public func close() {
        runIDs.close()  // first: its give-back is a write, and closing the queue folds the WAL into the file
        queue.close()
        reader.close()
        lookups.close()
    }

    /// Writes kept in memory after failed batches, waiting to be retried.
    public var retainedWriteCount: Int { queue.retainedWriteCount }
}

/// The read connection and the lock that serializes its use.
final class ReadConnection: Sendable {
    /// The connection, nil once closed.
    private let database: Locked<Database?>

    init(database: Database) { self.database = Locked(database) }

    /// Runs `body` with the connection, one caller at a time.
    func read<Result>(_ body: (Database) throws(StoreError) -> Result) throws(StoreError) -> Result {
        try database.withLock { database throws(StoreError) in
            guard let database else { throw StoreError.closed }
            return try body(database)
        }
    }

    func close() {
        database.withLock { $0 = nil }
    }
}
