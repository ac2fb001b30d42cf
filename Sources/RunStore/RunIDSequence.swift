import CSQLite
import Foundation

/// Run ids from the database, so that every process writing one file (a live server and `moonrunner import`)
/// gets ids no other process has: `store_meta.next_run_id` is a sequence, and each process reserves a block
/// of ids from it with one atomic `UPDATE … RETURNING` before using them, like a PostgreSQL sequence with a
/// cache. An id is never handed out twice; ids a process reserved but did not use are skipped (gaps).
///
/// The reservation also jumps past the largest id in `runs`, so a row written by an older build that counted
/// ids in memory is never reused.
final class RunIDSequence: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`; nil once the store is closed.
    private var database: Database?
    /// The reserved block not yet handed out: `next..<end`. Guarded by `lock`.
    private var next: Int64 = 0
    private var end: Int64 = 0
    /// The next block's size: 1 at first, doubling up to the configured size, so a process that starts one run
    /// (an import) reserves one id and a server starting hundreds rarely waits for the database.
    private var blockSize: Int64 = 1
    private let maximumBlockSize: Int64

    /// Opens the sequence's own connection (it must not wait behind the writer thread's or the readers' work).
    init(path: String, configuration: StoreConfiguration) throws(StoreError) {
        database = try Database(path: path, busyTimeout: configuration.busyTimeout)
        maximumBlockSize = Int64(max(1, configuration.runIDBlockSize))
    }

    /// The next id, reserving a new block in the database when the current one is used up.
    func allocate() throws(StoreError) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        if next >= end {
            guard let database else { throw StoreError.closed }
            let reserve = try database.cachedStatement("""
                UPDATE store_meta
                SET value = max(CAST(value AS INTEGER), (SELECT coalesce(max(id), 0) + 1 FROM runs)) + ?1
                WHERE key = 'next_run_id'
                RETURNING CAST(value AS INTEGER) - ?1
                """)
            defer { reserve.reset() }
            try reserve.bind(blockSize, at: 1)
            guard try reserve.step() else {
                throw StoreError(.corrupt, "store_meta has no next_run_id (migration missing)")
            }
            next = reserve.int64(at: 0)
            end = next + blockSize
            blockSize = min(blockSize * 2, maximumBlockSize)
            // Finish the statement now: its write lock is released only when the statement is reset.
            reserve.reset()
        }
        defer { next += 1 }
        return next
    }

    /// Gives the unused rest of the block back when no other process reserved after it (so a restart does not
    /// leave a gap), then closes the connection; later allocations fail.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        if let database, next < end, let giveBack = try? database.prepare("""
            UPDATE store_meta SET value = ?1 WHERE key = 'next_run_id' AND CAST(value AS INTEGER) = ?2
            """) {
            // Best effort: a gap in the ids is harmless.
            if (try? giveBack.bind(next, at: 1)) != nil, (try? giveBack.bind(end, at: 2)) != nil { try? giveBack.run() }
        }
        database = nil
    }
}
