import Foundation
import RunStore

/// Run ids from the database's `run_ids` sequence, so every node sharing the database gets ids no other node
/// has (`nextval` never repeats, whatever the other sessions do). The ids come in blocks, reserved with one
/// `SELECT nextval(…) FROM generate_series(…)` on a connection of their own; when half a block is left, a
/// thread of this object fetches the next one, so `allocate()` (which the server calls on its event loop) does
/// not wait for the network unless runs start faster than a round trip. Unused ids are gaps, never reused.
final class PostgresRunIDs: @unchecked Sendable {
    private let condition = NSCondition()
    private let blockSize: Int
    // Guarded by `condition`.
    /// Reserved ids not handed out yet, largest first (so the smallest is `popLast()`).
    private var available: [Int64] = []
    /// True while a fetch is in flight (in the thread or in a caller): only that fetch uses `connection`.
    private var fetching = false
    /// True when the thread should fetch.
    private var wanted = false
    private var closed = false
    private var threadDone = false
    private var lastFailure: (at: UInt64, error: StoreError)?
    /// Used only by whoever set `fetching`.
    private var connection: PostgresConnection?

    /// Opens the connection and reserves the first block now (the caller is not on an event loop yet).
    init(url: String, blockSize: Int) throws(StoreError) {
        self.blockSize = max(2, blockSize)
        let connection = try PostgresConnection(url: url)
        self.connection = connection
        available = try Self.fetch(count: self.blockSize, on: connection)
        BackgroundThread.start(named: "RunStore run ids") { [self] in refillLoop() }
    }

    /// The next id. Waits for the network only when no reserved id is left.
    func allocate() throws(StoreError) -> Int64 {
        condition.lock()
        defer { condition.unlock() }
        while true {
            guard !closed else { throw StoreError.closed }
            if let id = available.popLast() {
                if available.count <= blockSize / 2, !fetching, !recentlyFailed {
                    fetching = true
                    wanted = true
                    condition.broadcast()
                }
                return id
            }
            if fetching {
                condition.wait()
                continue
            }
            if let lastFailure, recentlyFailed { throw lastFailure.error }
            // Nothing reserved and nobody fetching (the thread's last fetch failed): fetch here.
            fetching = true
            condition.unlock()
            let result = fetchBlock()
            condition.lock()
            finish(result)
            if case .failure(let error) = result { throw error }
        }
    }

    /// Forgets the last failed fetch: the writer just committed, so the server is back.
    func serverIsBack() {
        condition.lock()
        lastFailure = nil
        condition.unlock()
    }

    /// Stops the thread and closes the connection; later allocations fail.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        while !threadDone { condition.wait() }
        condition.unlock()
    }

    // MARK: Fetching

    private var recentlyFailed: Bool {
        guard let lastFailure else { return false }
        return DispatchTime.now().uptimeNanoseconds - lastFailure.at < 1_000_000_000
    }

    private func refillLoop() {
        condition.lock()
        while true {
            while !wanted && !closed { condition.wait() }
            if closed {
                // A fetch asked of this thread (`allocate` set `fetching` for it) that never started: nobody
                // else would clear `fetching`, and the wait below would never end (a close right after a
                // refill request hung the test run).
                if wanted {
                    wanted = false
                    fetching = false
                }
                break
            }
            wanted = false
            condition.unlock()
            let result = fetchBlock()
            condition.lock()
            finish(result)
        }
        // A caller may still be fetching on the connection: it is closed after that fetch.
        while fetching { condition.wait() }
        connection = nil
        threadDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// One block from the database, on the connection (reconnected if it broke). Called by whoever set
    /// `fetching`, without the lock held.
    private func fetchBlock() -> Result<[Int64], StoreError> {
        guard let connection else { return .failure(StoreError.closed) }
        do throws(StoreError) {
            if !connection.isConnected { try connection.reconnect() }
            return .success(try Self.fetch(count: blockSize, on: connection))
        } catch {
            return .failure(error)
        }
    }

    /// Takes a fetch's outcome. Caller holds the lock.
    private func finish(_ result: Result<[Int64], StoreError>) {
        switch result {
        case .success(let ids):
            // The new ids are all larger than the ones left (the sequence only grows): they go in front.
            available = ids + available
            lastFailure = nil
        case .failure(let error):
            lastFailure = (DispatchTime.now().uptimeNanoseconds, error)
        }
        fetching = false
        condition.broadcast()
    }

    /// `count` fresh ids, largest first.
    private static func fetch(count: Int, on connection: PostgresConnection) throws(StoreError) -> [Int64] {
        let rows = try connection.query("SELECT nextval('run_ids') FROM generate_series(1, $1::integer)", [String(count)])
        var ids: [Int64] = []
        for row in 0..<rows.rowCount { ids.append(try rows.int64(row, 0)) }
        return ids.sorted(by: >)
    }
}
