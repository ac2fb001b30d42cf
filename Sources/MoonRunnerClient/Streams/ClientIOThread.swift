import Foundation
#if !canImport(Darwin)
import Reactor
#endif

/// The thread a client's streams, timers and delegate callbacks run on.
///
/// - Linux: one Reactor `EventLoop` on its own thread, shared by every client of the process (the socket
///   streams register their sockets with it).
/// - Apple platforms: one thread running a `RunLoop`, shared the same way; the Foundation socket streams are
///   scheduled on it.
///
/// Everything a client does with its streams happens on this thread, so the streams (which are not
/// thread-safe) are only ever touched by one thread.
final class ClientIOThread: Sendable {
    /// The thread every client uses unless its tests inject another.
    static let shared = ClientIOThread()

    #if canImport(Darwin)
    /// The run loop of the I/O thread, published once it runs.
    private let runLoopBox = RunLoopBox()

    private init() {
        let box = runLoopBox
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.runLoop = RunLoop.current
            // A port keeps the run loop alive with no streams scheduled yet.
            RunLoop.current.add(NSMachPort(), forMode: .default)
            ready.signal()
            while true { RunLoop.current.run(mode: .default, before: .distantFuture) }
        }
        thread.name = "moonrunner-client"
        thread.start()
        ready.wait()
    }

    /// The I/O thread's run loop (streams are scheduled on it in the default mode).
    var runLoop: RunLoop { runLoopBox.runLoop! }

    /// Runs `task` on the I/O thread, after earlier tasks.
    func execute(_ task: @escaping @Sendable () -> Void) {
        let loop = runLoop
        loop.perform(inModes: [.default], block: task)
        CFRunLoopWakeUp(loop.getCFRunLoop())
    }

    /// Runs `body` on the I/O thread after `delay` seconds; I/O thread only. The returned token cancels it.
    func schedule(after delay: Double, _ body: @escaping @Sendable () -> Void) -> ScheduledTask {
        let timer = TimerBox(Timer(timeInterval: delay, repeats: false) { _ in body() })
        runLoop.add(timer.timer, forMode: .default)
        return ScheduledTask(cancel: { timer.timer.invalidate() })
    }
    #else
    /// The shared loop.
    let loop: EventLoop

    private init() {
        do {
            loop = try EventLoop()
            _ = try EventLoopThread(loop: loop)
        } catch {
            fatalError("moonrunner client: cannot start the I/O thread: \(error)")
        }
    }

    /// Runs `task` on the I/O thread, after earlier tasks.
    func execute(_ task: @escaping @Sendable () -> Void) {
        loop.execute(task)
    }

    /// Runs `body` on the I/O thread after `delay` seconds; I/O thread only. The returned token cancels it
    /// (also on the I/O thread).
    func schedule(after delay: Double, _ body: @escaping @Sendable () -> Void) -> ScheduledTask {
        let loop = self.loop
        let id = loop.schedule(after: delay, body)
        return ScheduledTask(cancel: { loop.cancel(id) })
    }
    #endif
}

/// A timer on the I/O thread that can be cancelled there.
struct ScheduledTask: Sendable {
    /// Cancels the timer; harmless after it fired.
    let cancel: @Sendable () -> Void
}

#if canImport(Darwin)
/// Carries a timer into the cancel closure (only ever used on the I/O thread).
private final class TimerBox: @unchecked Sendable {
    let timer: Timer
    init(_ timer: Timer) { self.timer = timer }
}

/// Holds the I/O thread's run loop (written once before any reader runs, behind a semaphore).
private final class RunLoopBox: @unchecked Sendable {
    var runLoop: RunLoop?
}
#endif
