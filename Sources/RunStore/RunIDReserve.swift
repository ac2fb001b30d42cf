import Foundation
import Locking

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
/// Its state is behind one lock; `source` is used (outside it) only by the caller or thread that set
/// `fetching`.
package final class RunIDReserve: Sendable {
    private let name: String
    private let state: Locked<State>

    /// What the lock guards.
    private struct State {
        var source: RunIDSource?
        /// Reserved ids not handed out yet, largest first (so the smallest is `popLast()`).
        var available: [Int64] = []
        /// The size of the next block: doubles from the first up to `maximumBlock`.
        var nextBlock: Int
        let maximumBlock: Int
        /// The size of the last block reserved (the refill starts when half of it is left).
        var lastBlock = 0
        /// True while a fetch is in flight (on the thread or in a caller): only that fetch uses `source`.
        var fetching = false
        /// True when the thread should fetch.
        var wanted = false
        var threadStarted = false
        var threadDone = false
        var closed = false
        var lastFailure: (at: UInt64, error: StoreError)?

        var recentlyFailed: Bool {
            guard let lastFailure else { return false }
            return DispatchTime.now().uptimeNanoseconds - lastFailure.at < 1_000_000_000
        }

        /// Takes a fetch's outcome.
        mutating func finish(_ result: Result<[Int64], StoreError>) {
            switch result {
            case .success(let ids):
                take(ids)
                lastFailure = nil
            case .failure(let error):
                lastFailure = (DispatchTime.now().uptimeNanoseconds, error)
            }
            fetching = false
        }

        /// Adds a fresh block (its ids are all larger than the ones left: the sequences only grow).
        mutating func take(_ ids: [Int64]) {
            available = ids.sorted(by: >) + available
            lastBlock = ids.count
            nextBlock = min(nextBlock * 2, maximumBlock)
        }
    }

    /// What `allocate()` does next, decided under the lock.
    private enum Step {
        /// Hand out this id; `refilling`: wake the refill thread (starting it first if `startingThread`).
        case id(Int64, refilling: Bool, startingThread: Bool)
        /// Nothing reserved and nobody fetching: fetch a block here.
        case fetch(RunIDSource?, count: Int)
    }

    /// A reserve over `source`. Blocks start at `firstBlock` ids and double up to `maximumBlock`;
    /// `reservingNow` takes the first block at once (and throws its failure), else it is taken at the first
    /// `allocate()` (a process that starts one run, an import, reserves only what it uses). `name` names the
    /// refill thread.
    package init(_ source: RunIDSource, firstBlock: Int, maximumBlock: Int, reservingNow: Bool,
                 name: String) throws(StoreError) {
        self.name = name
        let maximumBlock = max(1, maximumBlock)
        var state = State(source: source, nextBlock: min(max(1, firstBlock), maximumBlock), maximumBlock: maximumBlock)
        if reservingNow { state.take(try source.reserve(state.nextBlock)) }
        self.state = Locked(state)
    }

    /// The next id. Waits for the database only when no reserved id is left.
    package func allocate() throws(StoreError) -> Int64 {
        while true {
            // An id reserved, a fetch here, or a wait for the one in flight.
            let step = try state.withLock(when: { $0.closed || !$0.available.isEmpty || !$0.fetching }) {
                state throws(StoreError) -> Step in
                guard !state.closed else { throw StoreError.closed }
                if let id = state.available.popLast() {
                    guard state.available.count <= state.lastBlock / 2, !state.fetching, !state.recentlyFailed else {
                        return .id(id, refilling: false, startingThread: false)
                    }
                    state.fetching = true
                    state.wanted = true
                    defer { state.threadStarted = true }
                    return .id(id, refilling: true, startingThread: !state.threadStarted)
                }
                if let lastFailure = state.lastFailure, state.recentlyFailed { throw lastFailure.error }
                state.fetching = true
                return .fetch(state.source, count: state.nextBlock)
            }
            switch step {
            case .id(let id, let refilling, let startingThread):
                if startingThread { BackgroundThread.start(named: name) { [self] in refillLoop() } }
                if refilling { state.broadcast() }
                return id
            case .fetch(let source, let count):
                let result = Self.fetch(count, from: source)
                state.withLock { $0.finish(result) }
                state.broadcast()
                if case .failure(let error) = result { throw error }
            }
        }
    }

    /// Forgets the last failed reservation: the store just committed, so the database is back.
    package func databaseIsBack() {
        state.withLock { $0.lastFailure = nil }
    }

    /// Waits until no reservation is in flight; the ids reserved and not handed out then. For tests and
    /// benchmarks that need to know the refill is done.
    package func settle() -> Int {
        state.withLock(when: { !$0.fetching }) { $0.available.count }
    }

    /// Stops the thread, hands the unused ids to the source's close; later allocations fail.
    package func close() {
        let closing = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            return true
        }
        guard closing else { return }
        state.broadcast()
        // The thread stops; a caller may still be fetching: the source closes after that fetch.
        let (source, unused) = state.withLock(when: { (!$0.threadStarted || $0.threadDone) && !$0.fetching }) { state in
            defer {
                state.source = nil
                state.available = []
            }
            return (state.source, state.available)
        }
        source?.close(returning: unused)
    }

    // MARK: Reserving

    private func refillLoop() {
        while true {
            let next = state.withLock(when: { $0.wanted || $0.closed }) { state -> (RunIDSource?, Int)? in
                if state.closed {
                    // A fetch asked of this thread (`allocate` set `fetching` for it) that never started: nobody
                    // else would clear `fetching`, and close would wait for it forever.
                    if state.wanted {
                        state.wanted = false
                        state.fetching = false
                    }
                    return nil
                }
                state.wanted = false
                return (state.source, state.nextBlock)
            }
            guard let (source, count) = next else { break }
            let result = Self.fetch(count, from: source)
            state.withLock { $0.finish(result) }
            state.broadcast()
        }
        state.withLock { $0.threadDone = true }
        state.broadcast()
    }

    /// One block from the source, by whoever set `fetching`, without the lock held (nobody else uses the source
    /// or changes the block's size while `fetching` is set).
    private static func fetch(_ count: Int, from source: RunIDSource?) -> Result<[Int64], StoreError> {
        guard let source else { return .failure(StoreError.closed) }
        do throws(StoreError) {
            return .success(try source.reserve(count))
        } catch {
            return .failure(error)
        }
    }
}
