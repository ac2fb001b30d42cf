import CSQLite

/// The one error type of the storage layer: an SQLite result code and a message saying what failed.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The SQLite (extended) result code, e.g. `SQLITE_BUSY` (5), `SQLITE_FULL` (13), `SQLITE_NOTADB` (26).
    /// Errors that do not come from SQLite (bad input, unsupported path) use `SQLITE_MISUSE` (21) or
    /// `SQLITE_ERROR` (1).
    public var code: Int32
    /// What failed, in words, including SQLite's own message.
    public var message: String

    /// Creates an error.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The primary result code (the low byte of an extended code), e.g. `SQLITE_IOERR` for `SQLITE_IOERR_WRITE`.
    public var primaryCode: Int32 { code & 0xFF }

    /// SQLite's name for the primary code's meaning, e.g. "database is locked".
    public var codeMeaning: String { String(cString: sqlite3_errstr(primaryCode)) }

    /// `message (SQLite error code: meaning)`; just the message for errors in input files.
    public var description: String {
        code == SQLITE_FORMAT ? message : "\(message) (SQLite error \(code): \(codeMeaning))"
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
    func adding(context: String) -> StoreError {
        StoreError(code: code, message: "\(context): \(message)")
    }
}
