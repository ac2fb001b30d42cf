import Foundation
import MoonRunnerTestSupport
import Synchronization
import Testing
@testable import RunStore

#if os(Linux)
import Glibc

/// The store's writer runs as a batch thread, so its wake-ups do not preempt an event loop on its core.
/// (Where a sandbox refuses the policy, the store's threads stay normal ones, and these tests do not apply.)
@Suite(.mayBlock, .enabled(if: BatchPolicyProbe.systemAllowsBatchThreads)) struct WriterSchedulingTests {
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

/// Asked once, before the suite runs.
enum BatchPolicyProbe {
    /// Whether a thread here may make itself a batch thread (seccomp or gVisor may refuse it).
    static let systemAllowsBatchThreads: Bool = {
        let allowed = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var parameters = sched_param()
            parameters.sched_priority = 0
            let result = pthread_setschedparam(pthread_self(), WriterSchedulingTests.batchPolicy, &parameters)
            allowed.withLock { $0 = result == 0 }
            done.signal()
        }
        thread.start()
        done.wait()
        return allowed.withLock { $0 }
    }()
}
#endif
