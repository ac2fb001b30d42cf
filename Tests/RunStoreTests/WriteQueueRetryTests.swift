import CSQLite
import Foundation
import MoonRunnerTestSupport
import Synchronization
import Testing
@testable import RunStore

/// The write queue's retry of writes kept after a failure.
@Suite(.mayBlock) struct WriteQueueRetryTests {
    /// A backend that fails while `isDown` and counts the commits it is asked for.
    final class FlakySink: BatchSink {
        let isDown = Mutex(true)
        let attempts = Mutex(0)
        let committed = Mutex(0)

        func commit(_ writes: [StoreWrite]) throws(StoreError) {
            attempts.withLock { $0 += 1 }
            if isDown.withLock({ $0 }) { throw StoreError(.unavailable, "down") }
            committed.withLock { $0 += writes.count }
        }

        func close() {}
    }

    /// The retry is due a fixed interval after the failure: flushes coming more often than that (a history
    /// read each, in a server) must not put it off. Once they did, and a store that came back was never retried.
    @Test func flushesMoreOftenThanTheRetryIntervalDoNotPutTheRetryOff() async throws {
        var configuration = StoreConfiguration()
        configuration.retainedRetryInterval = 0.3
        configuration.retryAttempts = 0
        let sink = FlakySink()
        let queue = WriteQueue(configuration: configuration, sink: sink, label: "test")
        let failures = Mutex(0)
        queue.setCommitHandler { receipt in if receipt.failure != nil { failures.withLock { $0 += 1 } } }
        queue.submit(.runner(name: "ann", keyHash: "h", created: 1))
        queue.flush()
        #expect(failures.withLock { $0 } == 1 && queue.retainedWriteCount == 1)
        sink.isDown.withLock { $0 = false }
        // A flush every 50 ms for up to 5 s: the retry (due 0.3 s after the failure) commits meanwhile.
        let deadline = Date().addingTimeInterval(5)
        while sink.committed.withLock({ $0 }) == 0, Date() < deadline {
            queue.flush()
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(sink.committed.withLock { $0 } == 1, "retried after \(sink.attempts.withLock { $0 }) attempts")
        #expect(queue.retainedWriteCount == 0)
        queue.close()
    }

    /// A reply that says a change was stored waits through a failed batch and its retries, and comes once the
    /// retry commits: never while the change is only in memory, never an error the change would outlive.
    @Test func flushCommittedWaitsForTheRetryThatCommits() async throws {
        var configuration = StoreConfiguration()
        configuration.retainedRetryInterval = 0.05
        configuration.retryAttempts = 0
        let sink = FlakySink()
        let queue = WriteQueue(configuration: configuration, sink: sink, label: "test")
        queue.submit(.runner(name: "ann", keyHash: "h", created: 1))
        let done = Mutex(false)
        let waiter = Thread {
            try? queue.flushCommitted()
            done.withLock { $0 = true }
        }
        waiter.start()
        // Failed attempts come and go (each an event the waiter sees), and it still waits.
        while sink.attempts.withLock({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!done.withLock { $0 }, "the change is only kept in memory: not stored yet")
        #expect(sink.committed.withLock { $0 } == 0)
        sink.isDown.withLock { $0 = false }
        let deadline = Date().addingTimeInterval(5)
        while !done.withLock({ $0 }), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(done.withLock { $0 } && sink.committed.withLock { $0 } == 1)
        // Nothing left: it answers at once.
        try queue.flushCommitted()
        queue.close()
    }
}
