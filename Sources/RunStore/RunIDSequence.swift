import CSQLite

/// Run ids from an SQLite file's own sequence, so that every process writing one file (a live server and
/// `moonrunner import`) gets ids no other process has: `store_meta.next_run_id` is a sequence, and each
/// reservation takes a block of ids from it with one atomic `UPDATE … RETURNING` (like a PostgreSQL sequence
/// with a cache). Handed out through a ``RunIDReserve``, which reserves ahead off the event loop.
///
/// A reservation also jumps past the largest id in `runs`, so a row written by an older build that counted ids
/// in memory is never reused. At close, the unused tail of the last block is given back when no other process
/// reserved after it (so a restart does not leave a gap).
final class RunIDSequence: RunIDSource {
    /// The sequence's own connection (it must not wait behind the writer thread's or the readers' work); nil
    /// once closed.
    private var database: Database?
    /// The end (exclusive) of the last block reserved.
    private var end: Int64 = 0

    init(path: String, configuration: StoreConfiguration) throws(StoreError) {
        database = try Database(path: path, busyTimeout: configuration.busyTimeout)
    }

    func reserve(_ count: Int) throws(StoreError) -> [Int64] {
        guard let database else { throw StoreError.closed }
        let reserve = try database.cachedStatement("""
            UPDATE store_meta
            SET value = max(CAST(value AS INTEGER), (SELECT coalesce(max(id), 0) + 1 FROM runs)) + ?1
            WHERE key = 'next_run_id'
            RETURNING CAST(value AS INTEGER) - ?1
            """)
        defer { reserve.reset() }
        try reserve.bind(Int64(count), at: 1)
        guard try reserve.step() else {
            throw StoreError(.corrupt, "store_meta has no next_run_id (migration missing)")
        }
        let first = reserve.int64(at: 0)
        // Finish the statement now: its write lock is released only when the statement is reset.
        reserve.reset()
        end = first + Int64(count)
        return Array(first..<end)
    }

    /// Gives back the unused ids that run up to the end of the last block (the sequence's value then is the
    /// first of them), if no other process reserved after it; then closes the connection.
    func close(returning unused: [Int64]) {
        defer { database = nil }
        var first = end
        for id in unused.sorted(by: >) where id == first - 1 { first = id }
        guard let database, first < end, let giveBack = try? database.prepare("""
            UPDATE store_meta SET value = ?1 WHERE key = 'next_run_id' AND CAST(value AS INTEGER) = ?2
            """) else { return }
        // Best effort: a gap in the ids is harmless.
        if (try? giveBack.bind(first, at: 1)) != nil, (try? giveBack.bind(end, at: 2)) != nil { try? giveBack.run() }
    }
}
