import CSQLite

/// The one error type of the storage layer: an SQLite result code and a message saying what failed.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The SQLite (extended) result code, e.g. `SQLITE_BUSY` (5), `SQLITE_FULL` (13), `SQLITE_NOTADB` (26).
    /// Errors that do not come from SQLite (bad input, unsupported path) use `SQLITE_MISUSE` (21) or
    /// `SQLITE_ERROR` (1). PostgreSQL's errors are translated to the nearest code (so ``isTransient`` holds for
    /// both), their own SQLSTATE kept in ``sqlState``.
    public var code: Int32
    /// What failed, in words, including SQLite's (or PostgreSQL's) own message.
    public var message: String
    /// PostgreSQL's five-character SQLSTATE (e.g. `23505`, `08006`) for errors from a PostgreSQL store; nil
    /// for SQLite and memory stores.
    public var sqlState: String?

    /// Creates an error.
    public init(code: Int32, message: String, sqlState: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
    }

    /// The primary result code (the low byte of an extended code), e.g. `SQLITE_IOERR` for `SQLITE_IOERR_WRITE`.
    public var primaryCode: Int32 { code & 0xFF }

    /// SQLite's name for the primary code's meaning, e.g. "database is locked".
    public var codeMeaning: String { String(cString: sqlite3_errstr(primaryCode)) }

    /// `message (SQLite error code: meaning)`, or `message (PostgreSQL SQLSTATE state)`; just the message
    /// for errors in input files.
    public var description: String {
        if let sqlState { return "\(message) (PostgreSQL SQLSTATE \(sqlState))" }
        return code == SQLITE_FORMAT ? message : "\(message) (SQLite error \(code): \(codeMeaning))"
    }

    /// True for failures that may go away by themselves (disk full, I/O, locks, read-only media), so a writer
    /// should keep the writes and retry rather than drop them.
    public var isTransient: Bool {
        switch primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN,
             SQLITE_NOMEM, SQLITE_PROTOCOL, SQLITE_INTERRUPT:
            return true
        default:
            return false
        }
    }

    /// The same error with some context in front of the message.
    package func adding(context: String) -> StoreError {
        StoreError(code: code, message: "\(context): \(message)", sqlState: sqlState)
    }
}
