import CSQLite
import Dispatch
import Foundation
import MoonRunnerTestSupport
import Synchronization
import Testing
@testable import RunStore

/// Run ids reserved ahead: starting a run takes an id already reserved, while the next block is reserved off
/// the caller's thread.
@Suite(.mayBlock) struct RunIDReserveTests {
    /// A sequence in memory whose reservations can be held at a gate or made to fail.
    final class Source: RunIDSource, @unchecked Sendable {
        let state = Mutex((next: Int64(1), asked: [Int](), failing: false, closedWith: [Int64]?.none))
        let gate = DispatchSemaphore(value: 0)
        let gated = Atomic(false)

        func reserve(_ count: Int) throws(StoreError) -> [Int64] {
            if gated.load(ordering: .acquiring) { gate.wait() }
            return try state.withLock { state throws(StoreError) in
                state.asked.append(count)
                if state.failing { throw StoreError(.unavailable, "down") }
                defer { state.next += Int64(count) }
                return Array(state.next..<state.next + Int64(count))
            }
        }

        func close(returning unused: [Int64]) { state.withLock { $0.closedWith = unused } }
    }

    @Test func idsComeFromTheBlockInHandWhileTheNextIsReserved() throws {
        let source = Source()
        let reserve = try RunIDReserve(source, firstBlock: 4, maximumBlock: 8, reservingNow: true, name: "test ids")
        source.gated.store(true, ordering: .releasing)  // every later reservation waits at the gate
        // Half the block used: the refill is asked for, and waits at the gate; the ids in hand still come at once.
        #expect(try (0..<4).map { _ throws(StoreError) in try reserve.allocate() } == [1, 2, 3, 4])
        source.gate.signal()
        #expect(reserve.settle() == 8, "the next block, doubled")
        #expect(try reserve.allocate() == 5)
        source.gated.store(false, ordering: .releasing)
        source.gate.signal()  // a refill that may be waiting already
        #expect(reserve.settle() == 7)
        reserve.close()
        #expect(source.state.withLock { $0.closedWith } == [12, 11, 10, 9, 8, 7, 6], "the unused ids, largest first")
        #expect(throws: StoreError.closed) { try reserve.allocate() }
    }

    @Test func aFailedReservationIsNotRetriedForASecondUnlessTheDatabaseIsBack() throws {
        let source = Source()
        let reserve = try RunIDReserve(source, firstBlock: 1, maximumBlock: 4, reservingNow: false, name: "test ids")
        source.state.withLock { $0.failing = true }
        #expect(throws: StoreError(.unavailable, "down")) { try reserve.allocate() }
        #expect(throws: StoreError(.unavailable, "down")) { try reserve.allocate() }
        #expect(source.state.withLock { $0.asked.count } == 1, "the second attempt did not ask the database again")
        source.state.withLock { $0.failing = false }
        reserve.databaseIsBack()
        #expect(try reserve.allocate() == 1)
        reserve.close()
    }

    /// The SQLite store's next run id does not wait for the file's write lock: another process (an import, a
    /// `sqlite3` shell) holding it once made the event loop wait up to the busy timeout, then fail the run.
    @Test func anSQLiteStoreHandsOutAReservedIdWhileAnotherConnectionHoldsTheWriteLock() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        var configuration = StoreConfiguration()
        configuration.busyTimeout = 0.2
        let store = try SQLiteRunStore(path: path, configuration: configuration)
        defer { store.close() }
        let first = try store.allocateRunID()
        #expect(store.runIDs.settle() > 0, "the next ids are reserved ahead")
        let other = try Database(path: path, busyTimeout: 0)
        try other.execute("BEGIN IMMEDIATE")
        #expect(try store.allocateRunID() == first + 1)
        try other.execute("ROLLBACK")
    }
}
