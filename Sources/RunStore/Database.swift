import CSQLite

/// One SQLite connection. The object owns the `sqlite3*` handle and closes it when it goes away.
/// Not thread-safe by itself: each connection is used by one thread at a time (the writer thread, or readers
/// under the read lock).
final class Database {
    /// The C handle, valid for the object's lifetime.
    let handle: OpaquePointer
    /// The path or URI the connection was opened with, for messages.
    let path: String
    /// Prepared statements kept for reuse, by SQL text.
    private var cache: [String: Statement] = [:]

    /// Opens (creating if allowed) a database file. Paths starting with `file:` are SQLite URIs
    /// (e.g. `file:/tmp/runs.sqlite?mode=ro`).
    init(path: String, readOnly: Bool = false, busyTimeout: Double) throws(StoreError) {
        var pointer: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        if path.hasPrefix("file:") { flags |= SQLITE_OPEN_URI }
        let code = sqlite3_open_v2(path, &pointer, flags, nil)
        guard code == SQLITE_OK, let pointer else {
            let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            // sqlite3_open_v2 may hand back a handle even when it fails; it must still be closed.
            if let pointer { sqlite3_close_v2(pointer) }
            throw StoreError(sqlite: code, "cannot open \(path): \(message)")
        }
        self.handle = pointer
        self.path = path
        sqlite3_extended_result_codes(pointer, 1)
        sqlite3_busy_timeout(pointer, Int32(clamping: Int((busyTimeout * 1000).rounded())))
    }

    deinit {
        cache.removeAll()  // statements must be finalized before the connection closes
        sqlite3_close_v2(handle)
    }

    /// The error for a failed call on this connection, with SQLite's current message.
    func error(_ code: Int32, _ context: String) -> StoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        return StoreError(sqlite: sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : code,
                          "\(context): \(message)")
    }

    /// Runs one or more SQL statements that return no rows of interest.
    func execute(_ sql: String) throws(StoreError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, "executing \(sql.prefix(80))") }
    }

    /// Prepares a fresh statement.
    func prepare(_ sql: String) throws(StoreError) -> Statement {
        var pointer: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard code == SQLITE_OK, let pointer else { throw error(code, "preparing \(sql.prefix(80))") }
        return Statement(handle: pointer, database: self)
    }

    /// A prepared statement for this SQL, reset and with bindings cleared, reused across calls.
    func cachedStatement(_ sql: String) throws(StoreError) -> Statement {
        if let statement = cache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        cache[sql] = statement
        return statement
    }

    /// The first column of the first row of a query, as an integer (nil without rows or for NULL).
    func integer(_ sql: String) throws(StoreError) -> Int64? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// The first column of the first row of a query, as text (nil without rows or for NULL).
    func text(_ sql: String) throws(StoreError) -> String? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.text(at: 0)
    }

    /// How a transaction takes its locks.
    enum TransactionKind: String {
        /// Locks on first read or write.
        case deferred = "DEFERRED"
        /// Takes the write lock at once, so a busy database fails at `BEGIN` rather than midway.
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it (or the commit) throws.
    func transaction<Result>(_ kind: TransactionKind = .immediate,
                             _ body: () throws(StoreError) -> Result) throws(StoreError) -> Result {
        try execute("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // A failed COMMIT may already have rolled back; then ROLLBACK fails harmlessly.
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// True while a transaction is open on this connection.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
}
