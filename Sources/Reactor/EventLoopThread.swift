import Dispatch
import Glibc

/// Runs an ``EventLoop`` on a dedicated POSIX thread (for servers embedded in tests and tools).
///
/// Configure the loop first (that is allowed before `run()`), then start the thread; call
/// `loop.stop()` from anywhere and wait with ``join()`` or ``waitUntilFinished()``.
public final class EventLoopThread: Sendable {
    /// The loop being run.
    public let loop: EventLoop
    /// Entered before the thread starts, left when `run()` returns.
    private let running = DispatchGroup()

    /// Starts a detached thread that calls `loop.run()`.
    public init(loop: EventLoop) throws(IOError) {
        self.loop = loop
        let group = running
        group.enter()
        let body = Unmanaged.passRetained(ThreadBody {
            loop.run()
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
    }

    /// Blocks until `run()` has returned or `timeout` seconds pass; true if it returned.
    public func join(timeout: Double) -> Bool {
        running.wait(timeout: .now() + timeout) == .success
    }

    /// Suspends until the loop's `run()` has returned.
    public func waitUntilFinished() async {
        await withCheckedContinuation { continuation in
            running.notify(queue: .global()) { continuation.resume() }
        }
    }
}

/// Carries the thread's closure through `pthread_create`'s context pointer.
private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
