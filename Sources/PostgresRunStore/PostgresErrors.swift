import CSQLite
import RunStore

/// PostgreSQL's SQLSTATEs in the store's terms: each error keeps its SQLSTATE and gets the SQLite code that
/// means the same to the write queue, so ``StoreError/isTransient`` decides retry or drop for both stores.
enum PostgresErrors {
    /// The store's error for a failure with `sqlState` (nil when libpq gave none: a lost or refused connection).
    static func storeError(sqlState: String?, message: String, connectionLost: Bool, context: String) -> StoreError {
        // No SQLSTATE and no connection: the server went away or never answered ("connection failure").
        let state = sqlState ?? (connectionLost ? "08006" : "XX000")
        return StoreError(code: code(for: state, connectionLost: connectionLost), message: "\(context): \(message)",
                          sqlState: state)
    }

    /// The SQLite code nearest in meaning (transient ones where waiting may help: the write queue keeps the writes).
    static func code(for state: String, connectionLost: Bool) -> Int32 {
        if connectionLost { return SQLITE_IOERR }
        switch state {
        case "08001", "08004", "57P03", "3D000": return SQLITE_CANTOPEN  // cannot connect (yet), no such database
        case "57014": return SQLITE_INTERRUPT  // statement timeout or cancel
        case "40001", "40P01", "53300": return SQLITE_BUSY  // serialization failure, deadlock, too many connections
        case "55P03": return SQLITE_LOCKED
        case "53100": return SQLITE_FULL
        case "53200": return SQLITE_NOMEM
        case "25006": return SQLITE_READONLY  // a standby, or default_transaction_read_only
        case "XX001", "XX002": return SQLITE_CORRUPT
        default: break
        }
        switch state.prefix(2) {
        case "08", "57", "58": return SQLITE_IOERR  // connection exceptions, shutdowns, system I/O errors
        case "53": return SQLITE_FULL  // insufficient resources
        case "23": return SQLITE_CONSTRAINT
        case "22": return SQLITE_MISMATCH  // data exceptions
        case "28": return SQLITE_AUTH  // wrong user or password: waiting will not help
        default: return SQLITE_ERROR
        }
    }
}

/// Connection URLs as shown in messages and logs.
package enum PostgresLocation {
    /// True for a `postgres://` or `postgresql://` URL (what `--db` takes for a PostgreSQL store).
    package static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The URL with the password of `USER:PASSWORD@` replaced by `***` (anything else unchanged).
    package static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard let at = authority.lastIndex(of: "@"),
              let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<authority.index(after: colon)]) + "***" + String(url[at...])
    }
}
