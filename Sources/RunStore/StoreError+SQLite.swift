import CSQLite

extension StoreError {
    /// The error for an SQLite result code (extended or primary), its kind from the primary code.
    init(sqlite code: Int32, _ message: String) {
        self.init(Self.kind(ofSQLite: code & 0xFF), message,
                  underlying: .sqlite(code: code, meaning: String(cString: sqlite3_errstr(code & 0xFF))))
    }

    /// SQLite's primary result code under the error (e.g. `SQLITE_IOERR` for `SQLITE_IOERR_WRITE`); nil for
    /// errors that did not come from SQLite.
    public var sqlitePrimaryCode: Int32? {
        if case .sqlite(let code, _) = underlying { return code & 0xFF }
        return nil
    }

    /// What an SQLite primary result code means to the store.
    static func kind(ofSQLite primary: Int32) -> Kind {
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_PROTOCOL: .unavailable
        case SQLITE_FULL: .full
        case SQLITE_READONLY: .readOnly
        case SQLITE_NOMEM: .outOfMemory
        case SQLITE_INTERRUPT: .interrupted
        case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt
        case SQLITE_AUTH, SQLITE_PERM: .refused
        case SQLITE_CONSTRAINT: .constraint
        case SQLITE_MISMATCH, SQLITE_RANGE, SQLITE_TOOBIG: .mismatch
        case SQLITE_MISUSE: .misuse
        default: .other
        }
    }
}
