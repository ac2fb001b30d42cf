import Dispatch
import Glibc
import Locking

/// Runs an ``EventLoop`` on a dedicated POSIX thread (for servers embedded in tests and tools).
///
/// Configure the loop first (that is allowed before `run()`), then start the thread; call
/// `loop.stop()` from anywhere and wait with ``join()`` or ``waitUntilFinished()``.
public final class EventLoopThread: Sendable {
    /// The loop being run.
    public let loop: EventLoop
    /// Entered before the thread starts, left when `run()` returns.
    private let running = DispatchGroup()
    /// Set under a pthread mutex when `run()` returns. libdispatch on Linux is not visible to ThreadSanitizer,
    /// so waiters also pass through this lock: that orders the loop thread's last writes before the waiter's
    /// reads in TSan's eyes too (the group alone already orders them for the hardware).
    private let finished = Locked(false)

    /// Starts a detached thread that calls `loop.run()`.
    public init(loop: EventLoop) throws(IOError) {
        self.loop = loop
        let group = running
        let finished = finished
        group.enter()
        let body = Unmanaged.passRetained(ThreadBody {
            loop.run()
            finished.set()
            group.leave()
        })
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, body.toOpaque())
        if result != 0 {
            body.release()
            group.leave()
            throw IOError(operation: "pthread_create", errno: result)
        }
        pthread_detach(thread)
    }

    /// Blocks until the loop's `run()` has returned.
    public func join() {
        running.wait()
        finished.synchronize()
    }

    /// Blocks until `run()` has returned or `timeout` seconds pass; true if it returned.
    public func join(timeout: Double) -> Bool {
        guard running.wait(timeout: .now() + timeout) == .success else { return false }
        finished.synchronize()
        return true
    }

    /// Suspends until the loop's `run()` has returned.
    public func waitUntilFinished() async {
        await withCheckedContinuation { continuation in
            running.notify(queue: .global()) { continuation.resume() }
        }
        // On the thread the caller goes on with (a continuation may resume anywhere, through libdispatch, which
        // ThreadSanitizer does not see): the edge from the loop thread's last writes to the caller's reads.
        finished.synchronize()
    }
}

/// Carries the thread's closure through `pthread_create`'s context pointer.
private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

extension Locked<Bool> {
    /// Called on the loop's thread after `run()` returns.
    fileprivate func set() {
        withLock { $0 = true }
    }

    /// Called by a waiter once the group says the thread is done: acquires what `set()` released (the lock is a
    /// pthread mutex, which ThreadSanitizer sees; libdispatch's group is invisible to it on Linux).
    fileprivate func synchronize() {
        withLock { precondition($0, "the loop thread's group was left before its flag was set") }
    }
}
