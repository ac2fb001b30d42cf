import CPostgreSQL
import Foundation
import RunStore

/// One libpq connection. The object owns the `PGconn*` (closed with `PQfinish` when it goes away) and turns
/// every status libpq reports into a ``StoreError``. Statements run with their values as parameters, never
/// spliced into the SQL: ``query(_:_:)`` prepares each SQL text once per session and runs it with
/// `PQexecPrepared`; ``execute(_:)`` is for constant SQL only (transaction control, the schema).
///
/// Not thread-safe: each owner says who may use it (the writer thread, a read lock, the run-id thread).
/// Every call blocks on the network, so none may run on a server's event loop.
package final class PostgresConnection {
    /// The `PGconn*`.
    private let handle: OpaquePointer
    /// Names of the statements prepared in the current session, by SQL text; emptied when the session is
    /// replaced (``reconnect()``), since the server forgets them with the session.
    private var prepared: [String: String] = [:]
    /// The URL with any password hidden, for messages.
    package let location: String

    /// Connects to `url` (`postgres://USER@HOST:PORT/DB`, or any libpq connection string). Waits at most 5 s
    /// for the server unless the URL sets `connect_timeout`.
    package init(url: String) throws(StoreError) {
        location = PostgresLocation.redacted(url)
        // Keywords before `dbname` are defaults the URL may override; those after it always apply.
        let keywords = ["connect_timeout", "application_name", "dbname", "client_encoding"]
        let values = ["5", "moonrunner", url, "UTF8"]
        let cKeywords = keywords.map { strdup($0) }, cValues = values.map { strdup($0) }
        defer { (cKeywords + cValues).forEach { free($0) } }
        let keywordArray: [UnsafePointer<CChar>?] = cKeywords.map { UnsafePointer($0) } + [nil]
        let valueArray: [UnsafePointer<CChar>?] = cValues.map { UnsafePointer($0) } + [nil]
        guard let connection = PQconnectdbParams(keywordArray, valueArray, 1) else {
            throw StoreError(.outOfMemory, "cannot connect to \(location): libpq is out of memory",
                             underlying: .postgres(sqlState: "53200"))
        }
        // From here on the object is whole: a throw below deinitializes it, which finishes the connection.
        handle = connection
        guard PQstatus(handle) == CONNECTION_OK else { throw connectionError("cannot connect to \(location)") }
        try startSession()
    }

    deinit { PQfinish(handle) }

    /// True while the connection is up (as far as libpq knows: a server gone since the last call shows at the
    /// next one).
    package var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// True while a transaction is open or failed on this connection (so it needs a `ROLLBACK`).
    package var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Replaces a broken session with a new one to the same server (`PQreset`), forgetting its prepared
    /// statements. Throws when the server cannot be reached.
    package func reconnect() throws(StoreError) {
        prepared = [:]
        PQreset(handle)
        guard isConnected else { throw connectionError("cannot reconnect to \(location)") }
        try startSession()
    }

    /// Settings every session needs: floats printed so that they read back exactly, and no NOTICEs (libpq
    /// would print them to stderr: "relation … already exists, skipping" at every start).
    private func startSession() throws(StoreError) {
        try execute("SET extra_float_digits = 3; SET client_min_messages = warning")
        // Before 10 there is no identity column (the awards' order); nothing older is supported upstream.
        guard PQserverVersion(handle) >= 100_000 else {
            throw StoreError(.unavailable,
                "\(location) runs PostgreSQL \(PQserverVersion(handle)); the store needs version 10 or later")
        }
    }

    /// Runs constant SQL (one or more statements, no parameters): `BEGIN`, `COMMIT`, the schema.
    @discardableResult
    package func execute(_ sql: StaticString) throws(StoreError) -> PostgresResult {
        let text = sql.description
        return try check(PQexec(handle, text), context: text)
    }

    /// Runs one statement with `parameters` as its `$1`, `$2`, … values (text, nil for NULL), preparing it
    /// on first use in this session.
    @discardableResult
    package func query(_ sql: String, _ parameters: [String?] = []) throws(StoreError) -> PostgresResult {
        let name = try statementName(sql, parameterCount: parameters.count)
        let values = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { values.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = values.map { $0.map { UnsafePointer($0) } }
        return try check(PQexecPrepared(handle, name, Int32(pointers.count), pointers, nil, nil, 0), context: sql)
    }

    /// Runs one statement with values in PostgreSQL's binary format (``PostgresBinaryArray``), each parameter's
    /// type fixed by a cast in the SQL (`$1::bigint[]`), preparing it on first use in this session.
    @discardableResult
    package func query(_ sql: String, binary parameters: [[UInt8]]) throws(StoreError) -> PostgresResult {
        let name = try statementName(sql, parameterCount: parameters.count)
        let lengths = parameters.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        // The buffers must stay put for the call: one contiguous copy, and pointers into it.
        let joined = parameters.flatMap { $0 }
        return try joined.withUnsafeBufferPointer { (bytes) throws(StoreError) -> PostgresResult in
            var pointers: [UnsafePointer<CChar>?] = []
            var offset = 0
            for parameter in parameters {
                pointers.append(bytes.baseAddress.map { UnsafeRawPointer($0 + offset).assumingMemoryBound(to: CChar.self) })
                offset += parameter.count
            }
            return try check(PQexecPrepared(handle, name, Int32(parameters.count), pointers, lengths, formats, 0),
                             context: sql)
        }
    }

    /// The name of `sql` prepared in this session, preparing it now if it is new.
    private func statementName(_ sql: String, parameterCount: Int) throws(StoreError) -> String {
        if let known = prepared[sql] { return known }
        let name = "s\(prepared.count + 1)"
        try check(PQprepare(handle, name, sql, Int32(parameterCount), nil), context: sql)
        prepared[sql] = name
        return name
    }

    /// Creates a database (the tests' throwaway ones). `CREATE DATABASE` takes no parameters: the name goes
    /// in as an identifier quoted by libpq, the only SQL this type assembles.
    package func createDatabase(named name: String) throws(StoreError) {
        let sql = "CREATE DATABASE \(try quotedIdentifier(name))"
        try check(PQexec(handle, sql), context: sql)
    }

    /// Drops a database, ending its sessions (PostgreSQL 13 or later).
    package func dropDatabase(named name: String) throws(StoreError) {
        let sql = "DROP DATABASE IF EXISTS \(try quotedIdentifier(name)) WITH (FORCE)"
        try check(PQexec(handle, sql), context: sql)
    }

    /// `text` quoted as an SQL identifier.
    private func quotedIdentifier(_ text: String) throws(StoreError) -> String {
        guard let quoted = PQescapeIdentifier(handle, text, text.utf8.count) else {
            throw connectionError("cannot quote the identifier \(text)")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    // MARK: Errors

    /// A result as a value, or its failure as the store's error. Takes ownership of `result`.
    @discardableResult
    private func check(_ result: OpaquePointer?, context: String) throws(StoreError) -> PostgresResult {
        guard let result else { throw connectionError("running \(context.prefix(80))") }
        let owned = PostgresResult(handle: result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return owned
        default:
            let field = { (code: UInt8) -> String? in
                PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
            }
            var message = field(UInt8(ascii: "M")) ?? Self.trimmed(PQresultErrorMessage(result))
            if let detail = field(UInt8(ascii: "D")) { message += " (\(detail))" }
            if message.isEmpty { message = Self.trimmed(PQerrorMessage(handle)) }
            throw PostgresErrors.storeError(sqlState: field(UInt8(ascii: "C")), message: message,
                                            connectionLost: !isConnected, context: "running \(context.prefix(80))")
        }
    }

    /// The connection's own error message (no result to read it from) as the store's error.
    private func connectionError(_ context: String) -> StoreError {
        PostgresErrors.storeError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)),
                                  connectionLost: !isConnected, context: context)
    }

    private static func trimmed(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        // libpq's messages may span lines (a hint on a tab-indented second line): one line for logs.
        return String(cString: text).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
    }
}

/// A query's result: owns the `PGresult*` (cleared with `PQclear`) and reads its text-format values.
package final class PostgresResult {
    private let handle: OpaquePointer

    init(handle: OpaquePointer) { self.handle = handle }

    deinit { PQclear(handle) }

    /// Rows returned.
    package var rowCount: Int { Int(PQntuples(handle)) }

    /// The command tag, e.g. `COMMIT`, or `ROLLBACK` for a `COMMIT` of a failed transaction.
    package var commandStatus: String { PQcmdStatus(handle).map { String(cString: $0) } ?? "" }

    /// True when the value is NULL.
    package func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }

    /// A value as text ("" for NULL).
    package func text(_ row: Int, _ column: Int) -> String {
        PQgetvalue(handle, Int32(row), Int32(column)).map { String(cString: $0) } ?? ""
    }

    /// A value as text, nil for NULL.
    package func optionalText(_ row: Int, _ column: Int) -> String? { isNull(row, column) ? nil : text(row, column) }

    /// A `double precision` value (`NaN`, `Infinity` and `-Infinity` included).
    package func double(_ row: Int, _ column: Int) throws(StoreError) -> Double {
        guard let pointer = PQgetvalue(handle, Int32(row), Int32(column)), pointer.pointee != 0 else {
            throw badValue(row, column, "a number")
        }
        var end: UnsafeMutablePointer<CChar>?
        let value = strtod(pointer, &end)  // glibc reads PostgreSQL's NaN and Infinity spellings too
        guard let end, end.pointee == 0 else { throw badValue(row, column, "a number") }
        return value
    }

    /// A `double precision` value, nil for NULL.
    package func optionalDouble(_ row: Int, _ column: Int) throws(StoreError) -> Double? {
        isNull(row, column) ? nil : try double(row, column)
    }

    /// A `bigint` value.
    package func int64(_ row: Int, _ column: Int) throws(StoreError) -> Int64 {
        guard let value = Int64(text(row, column)) else { throw badValue(row, column, "an integer") }
        return value
    }

    /// Every row made into a value by `make` (given the result and the row's index), in order: the loop every
    /// read of a list would otherwise write again.
    package func rows<Value>(_ make: (PostgresResult, Int) throws(StoreError) -> Value) throws(StoreError) -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(rowCount)
        for row in 0..<rowCount { values.append(try make(self, row)) }
        return values
    }

    private func badValue(_ row: Int, _ column: Int, _ expected: String) -> StoreError {
        let name = PQfname(handle, Int32(column)).map { String(cString: $0) } ?? "column \(column)"
        return StoreError(.mismatch, "\(name) of row \(row) is not \(expected): \(text(row, column))",
                          underlying: .postgres(sqlState: "22000"))
    }
}
