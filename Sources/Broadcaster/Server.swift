import Foundation
import Reactor
import RunCore
import RunStore
import Synchronization
import Wire

/// The live broadcast server: one epoll loop on its own thread, every connection non-blocking.
///
/// The loop thread owns every connection and the ``Hub``. Other threads reach it only through
/// `loop.execute` (the store's commit handler, `shutdown()`).
public final class Server: @unchecked Sendable {
    /// The configuration in force.
    public let configuration: ServerConfiguration
    /// The port the server listens on (the real one when configured with 0).
    public let port: UInt16
    let loop: EventLoop
    let store: any RunStore
    let logger: ServerLog
    let listener: ListeningSocket
    /// The HTTP listener (the web page, its event streams and JSON API), nil when HTTP is off.
    let httpListener: ListeningSocket?
    /// The HTTP port in use (the real one when configured with 0), nil when HTTP is off.
    public let httpPort: UInt16?
    /// The connections' own counters. Loop thread only.
    var connectionStatistics = ConnectionStatistics()
    /// Counters and histograms for `GET /metrics`. Loop thread only.
    let metrics = ServerMetrics()
    /// The JSON of the last event line framed for an event stream (a broadcast frames one line many times).
    var streamJSONCache: (line: [UInt8], json: [UInt8])?
    /// Phone apps' answers waiting for their position to be committed, by run.
    var pendingDeviceAnswers: [Int64: [PendingDeviceAnswer]] = [:]
    /// Wrong device tokens per source address in the current minute.
    var deviceFailures: [String: (count: Int, since: Double)] = [:]
    /// The `Date` header of the current second.
    var cachedHTTPDate: (second: Int64, text: String) = (0, "")
    /// Loop thread only from here on.
    var hub: Hub!
    /// Every open peer, line protocol and HTTP, by id (the hub's sessions use the same ids).
    var connections: [ConnectionID: Peer] = [:]
    var nextConnection = 1
    /// Open line-protocol connections and HTTP connections (each kind has its own limit).
    var lineConnectionCount = 0
    var httpConnectionCount = 0
    var pendingFlush: [Peer] = []
    /// Connections with lines left for their next turn, and whether that turn is scheduled.
    var queuedWork: [Connection] = []
    var isQueuedWorkScheduled = false
    /// True while the store is over its high-water mark; the connections parked until it catches up.
    var isStoreBacklogged = false
    var storeWaiters: [Connection] = []
    /// Peers to close at the end of the turn (see ``closeAtTurnEnd(_:reason:)``).
    var doomed: [(Peer, String)] = []
    let readBuffer: UnsafeMutableRawBufferPointer
    var isAccepting = true
    private var acceptHandler: AcceptHandler!
    private var httpAcceptHandler: AcceptHandler?
    /// History reads run here, off the loop, one at a time.
    let queryQueue = DispatchQueue(label: "moonrunner.history")
    /// Set once the loop has stopped; waited on by `waitUntilStopped()`.
    private let stopped = Mutex(false)
    private let stoppedSignal = DispatchSemaphore(value: 0)

    /// Binds the listening socket and prepares the loop; nothing runs until ``start()`` or ``run()``.
    /// `loop` may be one made earlier (``ShutdownSignals`` needs it before any other thread starts).
    public init(configuration: ServerConfiguration, store: any RunStore, log: ServerLog = ServerLog(),
                loop: EventLoop? = nil) throws(IOError) {
        self.configuration = configuration
        self.store = store
        self.logger = log
        if let loop { self.loop = loop } else { self.loop = try EventLoop() }
        listener = try ListeningSocket(host: configuration.host, port: configuration.port)
        port = listener.port
        if let http = configuration.httpPort {
            let socket = try ListeningSocket(host: configuration.host, port: http)
            httpListener = socket
            httpPort = socket.port
        } else {
            httpListener = nil
            httpPort = nil
        }
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        hub = Hub(configuration: configuration, store: store, output: self)
        hub.assertOnLoop = { [loop = self.loop] in loop.assertLoopThread() }
        _ = ProcessLimits.raiseOpenFileLimit(to: configuration.maximumConnections + 64)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Recovers live runs from the store, then serves on the calling thread until shut down.
    public func run() throws(IOError) {
        try prepare()
        loop.run()
        listener.close()
        httpListener?.close()
        stopped.withLock { $0 = true }
        stoppedSignal.signal()
    }

    /// Starts serving on a new thread and returns once the server accepts connections.
    public func start() throws(IOError) {
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<IOError?>(nil)
        let thread = Thread { [self] in
            do throws(IOError) {
                try prepare()
                ready.signal()
                loop.run()
            } catch {
                failure.withLock { $0 = error }
                ready.signal()
            }
            listener.close()
            httpListener?.close()
            stopped.withLock { $0 = true }
            stoppedSignal.signal()
        }
        thread.name = "moonrunner-loop"
        thread.start()
        ready.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Shuts down from any thread and waits: stop accepting, end open runs (saved), flush, stop the loop.
    public func shutdown() {
        loop.execute { [self] in beginShutdown() }
        waitUntilStopped()
    }

    /// Blocks until the loop has stopped.
    public func waitUntilStopped() {
        if stopped.withLock({ $0 }) { return }
        stoppedSignal.wait()
        stoppedSignal.signal()  // let any other waiter through too
    }

    /// Loop thread: registers the listener, timers and the store's commit handler.
    private func prepare() throws(IOError) {
        acceptHandler = AcceptHandler { [unowned self] in acceptConnections() }
        try loop.register(listener.fileDescriptor, interest: .readable, handler: acceptHandler)
        if let httpListener {
            httpAcceptHandler = AcceptHandler { [unowned self] in acceptHTTPConnections() }
            try loop.register(httpListener.fileDescriptor, interest: .readable, handler: httpAcceptHandler!)
        }
        store.setCommitHandler { [weak self] receipt in
            self?.loop.execute { [weak self] in
                guard let self else { return }
                hub.committed(receipt)
                resumeIfStoreCaughtUp()
                answerDevices(after: receipt)
                metrics.record(receipt, now: Self.now())
            }
        }
        loop.schedule(every: 1) { [unowned self] in
            let now = Self.now()
            hub.tick(now: now)
            tickHTTP(now: now)
        }
        loop.onTurnEnd { [unowned self] in
            flushPending()
            metrics.turnSeconds.observe(Double(loop.currentTurnNanoseconds) / 1e9)
        }
        recoverLiveRuns()
        logger.write("listening on \(configuration.host):\(port)")
        if let httpPort { logger.write("http on http://\(configuration.host):\(httpPort)/") }
    }

    /// Loop thread: stop accepting, end runs, then flush the store off the loop and stop.
    func beginShutdown() {
        guard isAccepting else { return }
        isAccepting = false
        loop.deregister(listener.fileDescriptor)
        listener.close()
        if let httpListener {
            loop.deregister(httpListener.fileDescriptor)
            httpListener.close()
        }
        hub.finishAllRuns(now: Self.now())
        flushPending()
        let store = self.store
        Thread.detachNewThread { [self] in
            store.flush()
            loop.execute { [self] in
                // The last acks have arrived: write what can be written, then close everyone.
                for id in connections.keys {
                    hub.fail(id, .shuttingDown, "the server is stopping; runs were saved")
                }
                flushPending()
                for connection in Array(connections.values) { closeNow(connection, reason: "shutdown") }
                logger.write("stopped")
                loop.stop()
            }
        }
    }

    /// Unix time now.
    static func now() -> Double { Date().timeIntervalSince1970 }
}

/// Accepts connections when a listening socket is readable.
private final class AcceptHandler: EventHandler {
    let accept: () -> Void
    init(_ accept: @escaping () -> Void) { self.accept = accept }
    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) { accept() }
}

extension Server {
    /// Loop thread, before serving: live runs left by a crash wait for their runners again.
    func recoverLiveRuns() {
        hub.recoverLiveRuns(now: Self.now())
        hub.loadDevices()
    }
}

/// SIGINT/SIGTERM handling for `serve`: made on the main thread before any other thread starts (signals are
/// blocked per thread and inherited), then pointed at the server once it exists.
public final class ShutdownSignals {
    /// The loop the signals are delivered on; hand it to the ``Server``.
    public let loop: EventLoop
    private weak var server: Server?

    /// Blocks SIGINT and SIGTERM in this thread (and so in every thread started later) and routes them to the loop.
    public init() throws(IOError) {
        loop = try EventLoop()
        try loop.onSignal([SIGINT, SIGTERM]) { [unowned self] signal in
            guard let server = self.server else { return }
            server.logger.write("signal \(signal): shutting down")
            server.beginShutdown()
        }
    }

    /// The server that shuts down on a signal.
    public func route(to server: Server) {
        self.server = server
    }
}
