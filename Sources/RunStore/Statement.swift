import CSQLite

/// SQLite's "copy the bytes now" destructor, so bound strings need not outlive the call.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One prepared statement. The object owns the `sqlite3_stmt*` and finalizes it when it goes away; it keeps
/// its connection alive meanwhile.
final class Statement {
    /// The C handle.
    let handle: OpaquePointer
    /// The connection, kept alive for as long as the statement is.
    let database: Database

    init(handle: OpaquePointer, database: Database) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Makes the statement ready to run again with new bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds a double (NULL for nil) to the 1-based parameter `index`.
    func bind(_ value: Double?, at index: Int32) throws(StoreError) {
        try check(value.map { sqlite3_bind_double(handle, index, $0) } ?? sqlite3_bind_null(handle, index), index)
    }

    /// Binds an integer (NULL for nil).
    func bind(_ value: Int64?, at index: Int32) throws(StoreError) {
        try check(value.map { sqlite3_bind_int64(handle, index, $0) } ?? sqlite3_bind_null(handle, index), index)
    }

    /// Binds UTF-8 text (NULL for nil).
    func bind(_ value: String?, at index: Int32) throws(StoreError) {
        guard var value else {
            try check(sqlite3_bind_null(handle, index), index)
            return
        }
        let code = value.withUTF8 { bytes -> Int32 in
            // An empty buffer may have no base address; SQLite takes a NULL pointer with length 0 as NULL,
            // so empty text is bound from a static empty string instead.
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, transientDestructor)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { characters in
                sqlite3_bind_text(handle, index, characters, Int32(bytes.count), transientDestructor)
            }
        }
        try check(code, index)
    }

    /// Binds UTF-8 text given as bytes (a fix chunk's JSON), copied by SQLite.
    func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) throws(StoreError) {
        let code: Int32
        if let base = bytes.baseAddress, !bytes.isEmpty {
            code = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { characters in
                sqlite3_bind_text(handle, index, characters, Int32(bytes.count), transientDestructor)
            }
        } else {
            code = sqlite3_bind_text(handle, index, "", 0, transientDestructor)
        }
        try check(code, index)
    }

    /// Binds a chunk text's bytes as UTF-8 text.
    func bindText(_ text: ChunkText, at index: Int32) throws(StoreError) {
        try text.withBytes { (bytes) throws(StoreError) in try bindText(bytes, at: index) }
    }

    /// A bind's return code as the store's error (a wrong index, a value too big, out of memory).
    private func check(_ code: Int32, _ index: Int32) throws(StoreError) {
        guard code == SQLITE_OK else {
            let sql = sqlite3_sql(handle).map { String(cString: $0) } ?? "statement"
            throw database.error(code, "binding parameter \(index) of \(sql.prefix(80))")
        }
    }

    /// Runs the statement one step: true when a row is ready, false when done.
    @discardableResult
    func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let sql = sqlite3_sql(handle).map { String(cString: $0) } ?? "statement"
            let error = database.error(code, "running \(sql.prefix(80))")
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows, then resets it.
    func run() throws(StoreError) {
        defer { sqlite3_reset(handle) }
        try step()
    }

    /// True when the column of the current row is NULL.
    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// A column of the current row as a double.
    func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// A column as a double, nil for NULL.
    func optionalDouble(at column: Int32) -> Double? { isNull(at: column) ? nil : double(at: column) }

    /// A column of the current row as an integer.
    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// A column of the current row as text ("" for NULL).
    func text(at column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Calls `body` with a text column's UTF-8 bytes, valid only during the call (no copy; empty for NULL).
    func withTextBytes<Result>(at column: Int32,
                               _ body: (UnsafeBufferPointer<UInt8>) throws(StoreError) -> Result) throws(StoreError) -> Result {
        let pointer = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    /// A column as text, nil for NULL.
    func optionalText(at column: Int32) -> String? { isNull(at: column) ? nil : text(at: column) }

    /// Steps through every row, making each into a value with `make`, then resets: the loop every read of a
    /// list would otherwise write again. Reset even when `make` throws, because a statement left on a row
    /// keeps the read transaction (and its old snapshot) open.
    func rows<Value>(_ make: (Statement) throws(StoreError) -> Value) throws(StoreError) -> [Value] {
        defer { reset() }
        var values: [Value] = []
        while try step() { values.append(try make(self)) }
        return values
    }
}
