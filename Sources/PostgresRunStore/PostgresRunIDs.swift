import RunStore

/// Run ids from the database's `run_ids` sequence, so every node sharing the database gets ids no other node
/// has (`nextval` never repeats, whatever the other sessions do): a block is one
/// `SELECT nextval(…) FROM generate_series(…)` on a connection of its own (reconnected if it broke). Handed out
/// through a ``RunIDReserve``, which reserves ahead off the event loop. Unused ids are gaps, never reused.
final class PostgresRunIDs: RunIDSource {
    /// Nil once closed.
    private var connection: PostgresConnection?

    /// Opens the connection.
    init(url: String) throws(StoreError) {
        connection = try PostgresConnection(url: url)
    }

    func reserve(_ count: Int) throws(StoreError) -> [Int64] {
        guard let connection else { throw StoreError.closed }
        if !connection.isConnected { try connection.reconnect() }
        return try connection.query("SELECT nextval('run_ids') FROM generate_series(1, $1::integer)", [String(count)])
            .rows { (rows, row) throws(StoreError) in try rows.int64(row, 0) }
    }

    /// A sequence gives nothing back: the connection closes.
    func close(returning unused: [Int64]) {
        connection = nil
    }
}
