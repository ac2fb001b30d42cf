#if canImport(Darwin)
import Foundation
import Locking

// Everything only Apple platforms compile: Foundation's socket streams and the run-loop thread they need.
// Never compiled by this project's CI (Linux only); kept this small so it can be read whole.

/// The thread a client's streams, timers and delegate callbacks run on: on Apple platforms, one thread
/// running a `RunLoop`, shared by every client of the process, on which the Foundation socket streams are
/// scheduled. (The Linux variant is in `ClientIOThread.swift`.)
final class ClientIOThread: Sendable {
    /// The thread every client uses.
    static let shared = ClientIOThread()

    /// The run loop of the I/O thread, published once it runs.
    private let runLoopBox = Locked<RunLoop?>(nil)

    private init() {
        let box = runLoopBox
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.withLock { $0 = RunLoop.current }
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
    var runLoop: RunLoop { runLoopBox.withLock { $0! } }

    /// Runs `task` on the I/O thread, after earlier tasks.
    func execute(_ task: @escaping @Sendable () -> Void) {
        let loop = runLoop
        loop.perform(inModes: [.default], block: task)
        CFRunLoopWakeUp(loop.getCFRunLoop())
    }

    /// Runs `body` on the I/O thread after `delay` seconds; I/O thread only. The returned token cancels it.
    func schedule(after delay: Double, _ body: @escaping @Sendable () -> Void) -> ScheduledTask {
        let timer = Locked(Timer(timeInterval: delay, repeats: false) { _ in body() })
        runLoop.add(timer.withLock { $0 }, forMode: .default)
        return ScheduledTask(cancel: { timer.withLock { $0.invalidate() } })
    }
}

/// Apple platforms: Foundation's socket streams, scheduled on the I/O thread's run loop.
enum PlatformStreams {
    /// A new, unopened stream pair to `configuration`'s host and port (Foundation resolves the host name;
    /// the engine's own timer enforces `connectTimeout`).
    static func make(_ configuration: ClientConfiguration, io: ClientIOThread) -> (InputStream, OutputStream) {
        var input: InputStream?
        var output: OutputStream?
        Stream.getStreamsToHost(withName: configuration.host, port: Int(configuration.port),
                                inputStream: &input, outputStream: &output)
        return (input!, output!)
    }

    /// Delivers the pair's events on the I/O thread.
    static func schedule(_ input: InputStream, _ output: OutputStream, on io: ClientIOThread) {
        input.schedule(in: io.runLoop, forMode: .default)
        output.schedule(in: io.runLoop, forMode: .default)
    }

    /// Stops the pair's events.
    static func unschedule(_ input: InputStream?, _ output: OutputStream?, from io: ClientIOThread) {
        input?.remove(from: io.runLoop, forMode: .default)
        output?.remove(from: io.runLoop, forMode: .default)
    }
}

#endif
