/// What device and share tokens have in common in the SQLite store: a table of hash, runner and creation time,
/// one column of the kind's own, and a revocation time. One insert, one revocation and one read serve both.
protocol StoredToken {
    /// Where this kind of token is kept.
    static var storage: TokenStorage { get }
    /// SHA-256 of the token, 64 hex digits.
    var hash: String { get }
    /// The runner the token is for.
    var runner: String { get }
    /// When the token was made (unix seconds).
    var created: Double { get }
    /// Reads a token from a row of hash, runner, creation time and the kind's own column.
    init(row: Statement)
    /// Binds the value of the kind's own column at `index`.
    func bindOwnColumn(to statement: Statement, at index: Int32) throws(StoreError)
}

/// A token kind's table, and the name of its own column (the fourth).
struct TokenStorage {
    /// The table.
    let table: String
    /// The column after hash, runner and creation time.
    let ownColumn: String
}

extension DeviceToken: StoredToken {
    static let storage = TokenStorage(table: "device_tokens", ownColumn: "label")

    init(row: Statement) {
        self.init(hash: row.text(at: 0), runner: row.text(at: 1), created: row.double(at: 2), label: row.optionalText(at: 3))
    }

    func bindOwnColumn(to statement: Statement, at index: Int32) throws(StoreError) { try statement.bind(label, at: index) }
}

extension ShareToken: StoredToken {
    static let storage = TokenStorage(table: "share_tokens", ownColumn: "expires")

    init(row: Statement) {
        self.init(hash: row.text(at: 0), runner: row.text(at: 1), created: row.double(at: 2), expires: row.double(at: 3))
    }

    func bindOwnColumn(to statement: Statement, at index: Int32) throws(StoreError) { try statement.bind(expires, at: index) }
}
