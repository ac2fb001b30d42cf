import Foundation
import MoonRunnerTestSupport
import Synchronization
import Testing
@testable import RunStore

#if os(Linux)
import Glibc

/// The store's writer runs as a batch thread, so its wake-ups never preempt an event loop on its core.
@Suite(.mayBlock) struct WriterSchedulingTests {
    /// Linux's `SCHED_BATCH`.
    static let batchPolicy: Int32 = 3

    /// A backend that records the scheduling policy of the thread that commits.
    final class PolicyRecordingSink: BatchSink {
        let policies = Mutex<[Int32]>([])

        func commit(_ writes: [StoreWrite]) throws(StoreError) {
            let policy = sched_getscheduler(0)
            policies.withLock { $0.append(policy) }
        }

        func close() {}
    }

    @Test func theWriterCommitsOnABatchThread() {
        let sink = PolicyRecordingSink()
        let queue = WriteQueue(configuration: StoreConfiguration(), sink: sink, label: "test")
        queue.submit(.runner(name: "ann", keyHash: "h", created: 1))
        queue.flush()
        queue.close()
        #expect(sink.policies.withLock { $0 } == [Self.batchPolicy])
        // The caller's thread is left as it was.
        #expect(sched_getscheduler(0) != Self.batchPolicy)
    }

    @Test func aBackgroundThreadIsABatchThread() {
        let seen = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        BackgroundThread.start(named: "test") {
            seen.withLock { $0 = sched_getscheduler(0) }
            done.signal()
        }
        done.wait()
        #expect(seen.withLock { $0 } == Self.batchPolicy)
    }
}
#endif
