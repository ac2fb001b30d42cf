import RunStore

/// PostgreSQL's SQLSTATEs in the store's terms: each error keeps its SQLSTATE and gets the kind that means the
/// same to the write queue, so ``StoreError/isTransient`` decides retry or drop for both stores.
enum PostgresErrors {
    /// The store's error for a failure with `sqlState` (nil when libpq gave none: a lost or refused connection).
    static func storeError(sqlState: String?, message: String, connectionLost: Bool, context: String) -> StoreError {
        // No SQLSTATE and no connection: the server went away or never answered ("connection failure").
        let state = sqlState ?? (connectionLost ? "08006" : "XX000")
        return StoreError(kind(of: state, connectionLost: connectionLost), "\(context): \(message)",
                          underlying: .postgres(sqlState: state))
    }

    /// What a SQLSTATE means to the store (transient kinds where waiting may help: the write queue keeps the writes).
    static func kind(of state: String, connectionLost: Bool) -> StoreError.Kind {
        if connectionLost { return .unavailable }
        switch state {
        case "08001", "08004", "57P03", "3D000": return .unavailable  // cannot connect (yet), no such database
        case "57014": return .interrupted  // statement timeout or cancel
        case "40001", "40P01", "53300", "55P03": return .busy  // serialization, deadlock, connections, lock
        case "53100": return .full
        case "53200": return .outOfMemory
        case "25006": return .readOnly  // a standby, or default_transaction_read_only
        case "XX001", "XX002": return .corrupt
        default: break
        }
        switch state.prefix(2) {
        case "08", "57", "58": return .unavailable  // connection exceptions, shutdowns, system I/O errors
        case "53": return .full  // insufficient resources
        case "23": return .constraint
        case "22": return .mismatch  // data exceptions
        case "28": return .refused  // wrong user or password: waiting will not help
        default: return .other
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
