import Foundation

/// Where a store's run ids come from: blocks of ids that no other process or node sharing the database gets.
/// Called by one thread at a time (the reserve hands the source to whoever fetches), so a source may keep a
/// database connection of its own.
package protocol RunIDSource: AnyObject {
    /// `count` fresh ids, in any order.
    func reserve(_ count: Int) throws(StoreError) -> [Int64]
    /// The store is closing: `unused` are the ids reserved and never handed out (largest first), which a source
    /// may give back to the database; then it closes its connection. Called once, last.
    func close(returning unused: [Int64])
}

/// Run ids reserved ahead, so that starting a run (on the server's event loop) does not wait for the database:
/// when half of the last block is left, a thread of this object reserves the next one, and `allocate()` waits
/// only when runs start faster than a reservation (or at the very first run of a store that reserves lazily).
/// The SQLite and PostgreSQL stores share it; each gives its ``RunIDSource``. Ids are handed out smallest first;
/// ids never handed out are gaps (or given back by the source), never reused.
///
/// `@unchecked Sendable`: every stored property is guarded by `condition`, and `source` is used only by the
/// caller or thread that set `fetching`.
package final class RunIDReserve: @unchecked Sendable {
    private let condition = NSCondition()
    private let name: String
    private let maximumBlock: Int
    // Guarded by `condition`.
    private var source: RunIDSource?
    /// Reserved ids not handed out yet, largest first (so the smallest is `popLast()`).
    private var available: [Int64] = []
    /// The size of the next block: doubles from the first up to `maximumBlock`.
    private var nextBlock: Int
    /// The size of the last block reserved (the refill starts when half of it is left).
    private var lastBlock = 0
    /// True while a fetch is in flight (on the thread or in a caller): only that fetch uses `source`.
    private var fetching = false
    /// True when the thread should fetch.
    private var wanted = false
    private var threadStarted = false
    private var threadDone = false
    private var closed = false
    private var lastFailure: (at: UInt64, error: StoreError)?

    /// A reserve over `source`. Blocks start at `firstBlock` ids and double up to `maximumBlock`;
    /// `reservingNow` takes the first block at once (and throws its failure), else it is taken at the first
    /// `allocate()` (a process that starts one run, an import, reserves only what it uses). `name` names the
    /// refill thread.
    package init(_ source: RunIDSource, firstBlock: Int, maximumBlock: Int, reservingNow: Bool,
                 name: String) throws(StoreError) {
        self.source = source
        self.name = name
        self.maximumBlock = max(1, maximumBlock)
        nextBlock = min(max(1, firstBlock), self.maximumBlock)
        if reservingNow {
            let first = try source.reserve(nextBlock)
            take(first)
        }
    }

    /// The next id. Waits for the database only when no reserved id is left.
    package func allocate() throws(StoreError) -> Int64 {
        condition.lock()
        defer { condition.unlock() }
        while true {
            guard !closed else { throw StoreError.closed }
            if let id = available.popLast() {
                if available.count <= lastBlock / 2, !fetching, !recentlyFailed {
                    fetching = true
                    wanted = true
                    startThreadIfNeeded()
                    condition.broadcast()
                }
                return id
            }
            if fetching {
                condition.wait()
                continue
            }
            if let lastFailure, recentlyFailed { throw lastFailure.error }
            // Nothing reserved and nobody fetching (the first id, or the thread's last fetch failed): here.
            fetching = true
            condition.unlock()
            let result = fetchBlock()
            condition.lock()
            finish(result)
            if case .failure(let error) = result { throw error }
        }
    }

    /// Forgets the last failed reservation: the store just committed, so the database is back.
    package func databaseIsBack() {
        condition.lock()
        lastFailure = nil
        condition.unlock()
    }

    /// Waits until no reservation is in flight; the ids reserved and not handed out then. For tests and
    /// benchmarks that need to know the refill is done.
    package func settle() -> Int {
        condition.lock()
        defer { condition.unlock() }
        while fetching { condition.wait() }
        return available.count
    }

    /// Stops the thread, hands the unused ids to the source's close; later allocations fail.
    package func close() {
        condition.lock()
        guard !closed else { return condition.unlock() }
        closed = true
        condition.broadcast()
        if threadStarted {
            while !threadDone { condition.wait() }
        }
        // A caller may still be fetching: the source closes after that fetch.
        while fetching { condition.wait() }
        let (source, unused) = (self.source, available)
        self.source = nil
        available = []
        condition.unlock()
        source?.close(returning: unused)
    }

    // MARK: Reserving

    private var recentlyFailed: Bool {
        guard let lastFailure else { return false }
        return DispatchTime.now().uptimeNanoseconds - lastFailure.at < 1_000_000_000
    }

    /// Starts the refill thread at the first refill asked for. Caller holds the lock.
    private func startThreadIfNeeded() {
        guard !threadStarted else { return }
        threadStarted = true
        BackgroundThread.start(named: name) { [self] in refillLoop() }
    }

    private func refillLoop() {
        condition.lock()
        while true {
            while !wanted && !closed { condition.wait() }
            if closed {
                // A fetch asked of this thread (`allocate` set `fetching` for it) that never started: nobody
                // else would clear `fetching`, and close would wait for it forever.
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
        threadDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// One block from the source. Called by whoever set `fetching`, without the lock held (the block's size and
    /// the source are read under it: nobody else changes them while `fetching` is set).
    private func fetchBlock() -> Result<[Int64], StoreError> {
        condition.lock()
        let (source, count) = (self.source, nextBlock)
        condition.unlock()
        guard let source else { return .failure(StoreError.closed) }
        do throws(StoreError) {
            return .success(try source.reserve(count))
        } catch {
            return .failure(error)
        }
    }

    /// Takes a fetch's outcome. Caller holds the lock.
    private func finish(_ result: Result<[Int64], StoreError>) {
        switch result {
        case .success(let ids):
            take(ids)
            lastFailure = nil
        case .failure(let error):
            lastFailure = (DispatchTime.now().uptimeNanoseconds, error)
        }
        fetching = false
        condition.broadcast()
    }

    /// Adds a fresh block (its ids are all larger than the ones left: the sequences only grow).
    private func take(_ ids: [Int64]) {
        available = ids.sorted(by: >) + available
        lastBlock = ids.count
        nextBlock = min(nextBlock * 2, maximumBlock)
    }
}
