import Foundation
#if !canImport(Darwin)
import Reactor

/// The thread a client's streams, timers and delegate callbacks run on: on Linux, one Reactor `EventLoop` on
/// its own thread, shared by every client of the process (the socket streams register their sockets with it).
/// The Apple-platform variant, a run-loop thread, is in `DarwinStreams.swift`.
///
/// Everything a client does with its streams happens on this thread, so the streams (which are not
/// thread-safe) are only ever touched by one thread.
final class ClientIOThread: Sendable {
    /// The thread every client uses unless its tests inject another.
    static let shared = ClientIOThread()

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
}

/// Linux: the client's own socket streams (`SocketStreams`), which need no scheduling.
enum PlatformStreams {
    /// A new, unopened stream pair to `configuration`'s host and port (resolved when the streams open).
    static func make(_ configuration: ClientConfiguration, io: ClientIOThread) -> (InputStream, OutputStream) {
        SocketStreams.make(host: configuration.host, port: configuration.port,
                           connectTimeout: configuration.connectTimeout, io: io)
    }

    /// Nothing to do: the socket streams deliver their events on the I/O loop by themselves.
    static func schedule(_ input: InputStream, _ output: OutputStream, on io: ClientIOThread) {}

    /// Nothing to do (see `schedule`).
    static func unschedule(_ input: InputStream?, _ output: OutputStream?, from io: ClientIOThread) {}
}
#endif

/// A timer on the I/O thread that can be cancelled there.
struct ScheduledTask: Sendable {
    /// Cancels the timer; harmless after it fired.
    let cancel: @Sendable () -> Void
}
