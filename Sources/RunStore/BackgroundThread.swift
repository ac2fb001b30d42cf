import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The store's own threads (the writer, the checkpointer): started so that waking up, they do not preempt an event
/// loop.
package enum BackgroundThread {
    /// Linux's `SCHED_BATCH` (sched.h defines it only for `_GNU_SOURCE`, which Swift's Glibc module does not set).
    private static let batchPolicy: Int32 = 3

    /// Starts `body` on a new thread named `name`, scheduled as a batch thread where the system allows it.
    ///
    /// The store's threads share the cores with the event loops (pinned to one core, they share that one). A
    /// normal thread that wakes up preempts the running loop, so a commit every few milliseconds would sit
    /// between a fix read and its events written; a batch thread has the same share of the CPU but waits for
    /// the loop's turn to end or its time slice to run out. If the policy cannot be set, the thread runs
    /// normally and nothing else changes.
    package static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            yieldsToEventLoops()
            body()
        }
        thread.name = name
        thread.start()
    }

    private static func yieldsToEventLoops() {
        #if os(Linux)
        var parameters = sched_param()
        parameters.sched_priority = 0
        // Refused only by a seccomp or container policy; the thread then stays a normal one, which is correct.
        _ = pthread_setschedparam(pthread_self(), batchPolicy, &parameters)
        #endif
    }
}
