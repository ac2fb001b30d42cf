// A program that embeds the server imports Broadcaster alone: LiveCore's public part is the server's
// configuration (``ServerConfiguration``), which the server takes.
@_exported import LiveCore
import Foundation
import Reactor
import RunStore
import Synchronization

/// The live broadcast server: one epoll loop on its own thread, every connection non-blocking.
///
/// This is the handle any thread may hold: what the server was configured with, its ports, starting it and
/// stopping it. Everything else is its ``ServerCore``, which only the loop's thread touches: other threads
/// reach it with `loop.execute` and ``core``, whose value traps off the loop.
public final class Server: Sendable {
    /// The configuration in force.
    public let configuration: ServerConfiguration
    /// The port the server listens on (the real one when configured with 0).
    public let port: UInt16
    /// The HTTP port in use (the real one when configured with 0), nil when HTTP is off.
    public let httpPort: UInt16?
    /// The loop the server runs on.
    let loop: EventLoop
    /// Everything the loop owns.
    let core: LoopBound<ServerCore>
    /// Where the server writes its log.
    let logger: ServerLog
    /// The store it keeps the runs in.
    let store: any RunStore
    /// Open connections per source address (shared by a group's loops).
    let connectionsPerAddress: ConnectionsPerAddress
    /// Set once the loop has stopped; waited on by `waitUntilStopped()`.
    private let stopped = Mutex(false)
    private let stoppedSignal = DispatchSemaphore(value: 0)

    /// Binds the listening socket and prepares the loop; nothing runs until ``start()`` or ``run()``.
    /// `loop` may be one made earlier (``ShutdownSignals`` needs it before any other thread starts). The
    /// connection limits are fitted within the open-file limit first (``configuration`` says what is in force).
    public convenience init(configuration: ServerConfiguration, store: any RunStore, log: ServerLog = ServerLog(),
                            loop: EventLoop? = nil) throws(IOError) {
        try self.init(configuration: configuration.fittedToOpenFiles(loops: 1, store: store, log: log), store: store,
                      log: log, loop: loop, shard: nil)
    }

    /// A server, or one loop of a ``ServerGroup`` (`shard`): see ``ServerCore``'s init. Made before its loop
    /// runs, on the thread that will start it.
    init(configuration: ServerConfiguration, store: any RunStore, log: ServerLog, loop: EventLoop?,
         shard: ShardPlacement?, listeners: ServerListeners? = nil) throws(IOError) {
        let core = try ServerCore(configuration: configuration, store: store, log: log, loop: loop, shard: shard,
                                  listeners: listeners)
        self.configuration = configuration
        port = core.port
        httpPort = core.httpPort
        self.loop = core.loop
        logger = log
        self.store = store
        connectionsPerAddress = core.connectionsPerAddress
        self.core = LoopBound(core, loop: core.loop)
    }

    /// Recovers live runs from the store, then serves on the calling thread until shut down.
    public func run() throws(IOError) {
        let core = self.core.value
        defer { stop(core) }
        try core.prepare(serving: self)
        loop.run()
    }

    /// Starts serving on a new thread and returns once the server accepts connections.
    public func start() throws(IOError) {
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<IOError?>(nil)
        let thread = Thread { [self] in
            // The loop has not run yet: this thread is its owner, and may take the core.
            let core = self.core.value
            do throws(IOError) {
                try core.prepare(serving: self)
                ready.signal()
                loop.run()
            } catch {
                failure.withLock { $0 = error }
                ready.signal()
            }
            stop(core)
        }
        thread.name = "moonrunner-loop"
        thread.start()
        ready.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Shuts down from any thread and waits: stop accepting, end open runs (saved), flush, stop the loop.
    public func shutdown() {
        loop.execute { [core] in core.value.beginShutdown() }
        waitUntilStopped()
    }

    /// Blocks until the loop has stopped.
    public func waitUntilStopped() {
        if stopped.withLock({ $0 }) { return }
        stoppedSignal.wait()
        stoppedSignal.signal()  // let any other waiter through too
    }

    /// Bytes held for all of this loop's connections (output not written, requests not whole), read on the loop
    /// (for tests and operators' tools). Any thread but the loop's.
    package func pendingOutputBytes() -> Int {
        let total = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        loop.execute { [core] in
            let connections = core.value.connections.values
            total.withLock { $0 = connections.reduce(0) { $0 + $1.output.pendingBytes + $1.bufferedInputBytes } }
            done.signal()
        }
        done.wait()
        return total.withLock { $0 }
    }

    /// The loop has returned: the listeners closed, and the waiters told.
    private func stop(_ core: ServerCore) {
        core.closeListeners()
        stopped.withLock { $0 = true }
        stoppedSignal.signal()
    }
}
