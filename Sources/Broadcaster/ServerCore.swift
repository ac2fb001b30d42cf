import LiveCore
import Foundation
import HTTP
import Reactor
import RunCore
import RunStore
import Synchronization
import Wire

/// What a ``Server`` is on its loop: every connection, the ``Hub``, and the carrying out of what it decides.
/// Not `Sendable`: only its loop's thread touches it. Other threads hold the ``Server`` (its handle) and reach
/// it through `loop.execute` and the handle's `core` (a ``LoopBound``, which traps off the loop). In a group,
/// each core is one loop: it owns a shard of the runners, and only the first one listens.
final class ServerCore {
    /// The configuration in force.
    let configuration: ServerConfiguration
    /// The port the server listens on (the real one when configured with 0).
    let port: UInt16
    let loop: EventLoop
    let store: any RunStore
    let logger: ServerLog
    /// The line-protocol listener; nil on the loops of a group other than the first.
    let listener: ListeningSocket?
    /// The HTTP listener (the web page, its event streams and JSON API), nil when HTTP is off.
    let httpListener: ListeningSocket?
    /// The HTTP port in use (the real one when configured with 0), nil when HTTP is off.
    let httpPort: UInt16?
    /// The connections' own counters. Loop thread only.
    var connectionStatistics = ConnectionStatistics()
    /// Counters and histograms for `GET /metrics`. Loop thread only.
    let metrics = ServerMetrics()
    /// The JSON of the last event line framed for an event stream (a broadcast frames one line many times).
    var streamJSONCache: (line: [UInt8], json: [UInt8])?
    /// The frame of the last event line framed for event streams, shared by every stream it goes to.
    var streamFrameCache: (line: [UInt8], sequence: UInt64?, frame: SharedLine)?
    /// Runners' own connections with more than the hard limit pending: bytes written when last seen to make
    /// progress, and when. Loop thread only.
    var stalledRunners: [ConnectionID: (written: Int, since: Double)] = [:]
    /// The one copy of the line being broadcast, queued by every line-protocol recipient (see ``SharedLine``).
    var sharedLines = SharedLineCache()
    /// Requests whose answer the hub gave while carrying out other effects (a phone's, once its positions are
    /// on disk): written, and their connections' next requests taken, once those effects are all carried out.
    var resumeAfterEffects: [(ConnectionID, HTTPResponse, close: Bool)] = []
    /// Wrong device tokens per source address in the current minute (shared by a group's loops).
    let wrongTokens: WrongTokenLimiter
    /// Open connections per source address (shared by a group's loops).
    let connectionsPerAddress: ConnectionsPerAddress
    /// When the log last said the process ran out of descriptors (said at most every 10 s). Loop thread only.
    var outOfDescriptorsLoggedAt: Double = 0
    /// The timer that calls the hub when the next replayed line is due (loop thread only).
    var replayTimer: TimerID?
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
    /// How many at the front of `queuedWork` go before the rest (they were stopped by a full turn, not by
    /// their own share); loop thread only.
    var queuedFirstCount = 0
    /// Lines this loop has handled in the current turn, against ``ServerConfiguration/linesPerLoopTurn``
    /// (reset at the turn's end); loop thread only.
    var linesThisTurn = 0
    /// True while the store is over its high-water mark; the connections parked until it catches up.
    var isStoreBacklogged = false
    var storeWaiters: [Connection] = []
    /// The hub's broadcast being carried out: its event number and typed event (see
    /// ``HubEffect/broadcastBegins(sequence:typed:)``); nil between broadcasts. Loop thread only.
    var currentBroadcast: (sequence: UInt64, typed: TypedBroadcast?)?
    /// Hub inputs being fed now (``decide(_:)``), to check that none is fed around it. Loop thread only.
    var decisions = 0
    /// True while the hub's effects are being carried out (``carryOutHubEffects()`` is not re-entered).
    var isCarryingOutHubEffects = false
    /// Peers to close at the end of the turn (see ``closeAtTurnEnd(_:reason:)``).
    var doomed: [(Peer, String)] = []
    let readBuffer: UnsafeMutableRawBufferPointer
    var isAccepting = true
    private var acceptHandler: AcceptHandler!
    private var httpAcceptHandler: AcceptHandler?
    /// History reads run here, off the loop, one at a time.
    let queryQueue = DispatchQueue(label: "moonrunner.history")
    /// Reads handed to `queryQueue` and not answered yet (see ``ServerConfiguration/maximumQueuedReads``).
    var queuedReads = 0
    /// Replies that say a change was stored wait for its commit here, never behind a history read.
    let commitQueue = DispatchQueue(label: "moonrunner.commits")
    /// This loop's place among the loops of a ``ServerGroup``; nil for a server of one loop.
    let shard: ShardPlacement?
    /// Messages for the other loops, gathered during a turn and sent at its end, one batch per loop, with how
    /// many of them are events. Loop thread only.
    var relayOutbox: [[RelayMessage]] = []
    var relayOutboxEvents: [Int] = []
    /// `stats:` answers waiting for the other loops' counters, by request number. Loop thread only.
    var pendingCounters: [Int: PendingCounters] = [:]
    /// The cluster this server is a node of (set by ``ServerGroup/joinCluster(_:)`` before the loop runs), and
    /// this turn's messages for it. Loop thread only once running.
    var cluster: ClusterNode?
    var clusterOutbox: [HubNews] = []
    /// The hub's ``Hub/followGeneration`` the cluster last heard of (-1: not yet).
    var clusterFollowGeneration = -1
    var nextCountersRequest = 1
    /// The store's way back to this loop (a server outside a group only); detached when the loop stops.
    /// Loop thread only.
    var commitRelay: CommitRelay?

    /// A server, or one loop of a ``ServerGroup`` (`shard`): a loop after the first does not listen. The
    /// listening one takes `listeners` when they were bound before (``ServerListeners``), else binds its own.
    /// `configuration` is used as it is: its limits were fitted within the open-file limit by the caller.
    init(configuration: ServerConfiguration, store: any RunStore, log: ServerLog, loop: EventLoop?,
         shard: ShardPlacement?, listeners: ServerListeners? = nil) throws(IOError) {
        self.configuration = configuration
        self.store = store
        self.logger = log
        self.shard = shard
        wrongTokens = shard?.router.wrongTokens ?? WrongTokenLimiter(perMinute: configuration.deviceFailuresPerMinute)
        connectionsPerAddress = shard?.router.connectionsPerAddress
            ?? ConnectionsPerAddress(limit: configuration.maximumConnectionsPerAddress,
                                     countsLoopback: configuration.capsLoopbackPerAddress)
        if let loop { self.loop = loop } else { self.loop = try EventLoop() }
        if let shard, shard.index > 0 {
            listener = nil
            httpListener = nil
            port = shard.port
            httpPort = shard.httpPort
        } else {
            let bound: ServerListeners
            if let listeners { bound = listeners } else { bound = try Self.listen(configuration) }
            listener = bound.line
            port = bound.line.port
            httpListener = bound.http
            httpPort = bound.http?.port
        }
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        hub = Hub(configuration: configuration, store: store)
        hub.checkInputs { [unowned self, loop = self.loop] in
            loop.assertLoopThread()
            assert(decisions > 0, "a hub input outside `decide`: its effects would wait for the turn's end")
        }
        hub.share(sequence: nil, wrongTokens: wrongTokens)
        if let shard { joinShards(shard) } else { hub.numberEvents(after: Self.clockEventNumber()) }
    }

    /// The clock in microseconds: where event numbers start, so they go on rising across restarts (as a
    /// cluster node's do).
    static func clockEventNumber() -> UInt64 { UInt64(max(0, now() * 1e6)) }

    /// Binds the configuration's ports; the failed call is the error (this init's callers catch `IOError`).
    private static func listen(_ configuration: ServerConfiguration) throws(IOError) -> ServerListeners {
        do throws(ListenError) {
            return try ServerListeners(configuration: configuration)
        } catch {
            throw error.cause
        }
    }

    deinit {
        readBuffer.deallocate()
    }

    /// After the loop stopped: the listeners closed, the store's receipts no longer delivered here.
    func closeListeners() {
        commitRelay?.detach()
        listener?.close()
        httpListener?.close()
    }

    /// Loop thread (or its owner before it runs): registers the listener, timers and the store's commit
    /// handler, which reaches this loop through `server` (the handle).
    func prepare(serving server: Server) throws(IOError) {
        if let listener {
            acceptHandler = AcceptHandler { [unowned self] in acceptConnections() }
            try loop.register(listener.fileDescriptor, interest: .readable, handler: acceptHandler)
        }
        if let httpListener {
            httpAcceptHandler = AcceptHandler { [unowned self] in acceptHTTPConnections() }
            try loop.register(httpListener.fileDescriptor, interest: .readable, handler: httpAcceptHandler!)
        }
        // A group's loops all hear every receipt (``ServerGroup`` sets the one handler).
        if shard == nil {
            let relay = CommitRelay(server)
            commitRelay = relay
            store.setCommitHandler { receipt in relay.deliver(receipt) }
        }
        loop.schedule(every: 1) { [unowned self] in
            let now = Self.now()
            decide { $0.tick(now: now) }
            tickHTTP(now: now)
            closeStalledRunners(now: now)
            enforceOutputBudget()
            metrics.noteWaitingWrites(store.pendingWriteCount, now: now)
        }
        // Process-wide, so one loop does it.
        if let interval = configuration.memoryReturnInterval, (shard?.index ?? 0) == 0 {
            loop.schedule(every: interval) { ProcessLimits.returnFreeMemory() }
        }
        loop.onTurnEnd { [unowned self] in
            linesThisTurn = 0
            // Every input is fed through `decide`, which carries out what the hub decided at once; one that was
            // not would have its lines wait to here.
            assert(hub.effects.isEmpty, "the hub decided something outside `decide`: \(String(describing: hub.effects.first))")
            carryOutHubEffects()
            // Relays first: the other loops have this turn's news before its replies reach any client.
            sendRelays()
            sendToCluster()
            flushPending()
            metrics.turnSeconds.observe(Double(loop.currentTurnNanoseconds) / 1e9)
        }
        // The loop's first task, before it accepts anyone: by then a cluster node is known to be one (it does
        // not recover runs at start, see ServerGroup.joinCluster).
        let me = unownedOnLoop
        loop.execute {
            if me.value.core.cluster == nil { me.value.core.recoverLiveRuns() }
        }
        guard listener != nil else { return }
        logger.write("listening on \(configuration.host):\(port)")
        if let httpPort { logger.write("http on http://\(configuration.host):\(httpPort)/") }
    }

    /// Loop thread: a batch reached the disk (acks, the apps' answers, parked runners).
    func committed(_ receipt: CommitReceipt) {
        decide { $0.committed(receipt) }
        resumeIfStoreCaughtUp()
        metrics.record(receipt, now: Self.now())
    }

    /// Loop thread: stop accepting, end runs, then flush the store off the loop and stop.
    func beginShutdown() {
        guard endRunsForShutdown() else { return }
        let store = self.store, core = LoopBound(self, loop: loop)
        Thread.detachNewThread {
            store.flush()
            core.loop.execute { core.value.closeEverything() }
        }
    }

    /// Loop thread, the first half of a shutdown: stop accepting, end and save the runs, and send their `end:`
    /// to the other loops; false when already done.
    func endRunsForShutdown() -> Bool {
        guard isAccepting else { return false }
        isAccepting = false
        if let listener {
            loop.deregister(listener.fileDescriptor)
            listener.close()
        }
        if let httpListener {
            loop.deregister(httpListener.fileDescriptor)
            httpListener.close()
        }
        decide { $0.finishAllRuns(now: Self.now()) }
        flushPending()
        sendRelays()
        return true
    }

    /// Loop thread, the second half, once the store is flushed (the last acks have arrived): write what can be
    /// written, close everyone, stop the loop.
    func closeEverything() {
        for id in connections.keys {
            decide { $0.fail(id, .shuttingDown, "the server is stopping; runs were saved") }
        }
        flushPending()
        for connection in Array(connections.values) { closeNow(connection, reason: "shutdown") }
        if listener != nil { logger.write("stopped") }
        loop.stop()
    }

    /// Unix time now.
    static func now() -> Double { Date().timeIntervalSince1970 }

    /// This core for a task it posts to its own loop, not keeping it alive (as `[unowned self]` did): a task
    /// still queued when the loop stops must not hold the core, its loop and its buffers for ever.
    var unownedOnLoop: LoopBound<UnownedCore> { LoopBound(UnownedCore(core: self), loop: loop) }

    /// An unowned reference to a core (see ``unownedOnLoop``).
    struct UnownedCore {
        unowned let core: ServerCore
    }
}

/// Accepts connections when a listening socket is readable.
private final class AcceptHandler: EventHandler {
    let accept: () -> Void
    init(_ accept: @escaping () -> Void) { self.accept = accept }
    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) { accept() }
}

extension ServerCore {
    /// Loop thread, before serving: live runs left by a crash wait for their runners again.
    func recoverLiveRuns() {
        decide { $0.recoverLiveRuns(now: Self.now()) }
        decide { $0.loadDevices() }
        decide { $0.loadShares(now: Self.now()) }
    }
}

/// SIGINT/SIGTERM handling for `serve`: made on the main thread before any other thread starts (signals are
/// blocked per thread and inherited), then pointed at the server once it exists.
public final class ShutdownSignals {
    /// The loop the signals are delivered on; hand it to the ``Server``.
    public let loop: EventLoop
    private weak var server: Server?
    private weak var group: ServerGroup?

    /// Blocks SIGINT and SIGTERM in this thread (and so in every thread started later) and routes them to the loop.
    public init() throws(IOError) {
        loop = try EventLoop()
        try loop.onSignal([SIGINT, SIGTERM]) { [unowned self] signal in
            if let group = self.group {
                group.servers[0].logger.write("signal \(signal): shutting down")
                group.beginShutdown()
                return
            }
            guard let server = self.server else { return }
            server.logger.write("signal \(signal): shutting down")
            server.core.value.beginShutdown()
        }
    }

    /// The server that shuts down on a signal.
    public func route(to server: Server) {
        self.server = server
    }

    /// The loops that shut down on a signal.
    public func route(to group: ServerGroup) {
        self.group = group
    }
}
