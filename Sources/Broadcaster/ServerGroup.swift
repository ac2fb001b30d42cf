import LiveCore
import ClusterBus
import Foundation
import Reactor
import RunStore
import Synchronization

/// The server on several event loops (`moonrunner serve --loops N`): N ``Server`` loops, each on its own
/// thread, each owning its connections and the runners whose names hash to it.
///
/// The first loop listens and deals accepted connections to the loops in turn. A runner's connection moves to
/// the loop that owns the runner when it says `iam:` (a phone app's when it posts), so a run is measured on
/// one thread only; every event is relayed to the other loops at the end of the turn that made it, through
/// each loop's wake-up descriptor and a bounded inbox, and each loop delivers it to its own followers. With one
/// loop it is a plain ``Server``.
public final class ServerGroup: Sendable {
    /// The loops, the first one listening.
    public let servers: [Server]
    let router: ShardRouter?
    /// The cluster this server is a node of, once ``joinCluster(_:)`` made it one.
    private let clusterNode = Mutex<ClusterNode?>(nil)

    /// The port line-protocol clients connect to.
    public var port: UInt16 { servers[0].port }
    /// The HTTP port, nil when HTTP is off.
    public var httpPort: UInt16? { servers[0].httpPort }

    /// Binds the listeners (or takes `listeners`, bound earlier) and prepares `loops` loops sharing `store`.
    /// `loop` is the first loop's event loop when one was made earlier (``ShutdownSignals``). The connection
    /// limits are fitted within the open-file limit first, once for all the loops (each loop's `configuration`
    /// says what is in force).
    public init(configuration: ServerConfiguration, store: any RunStore, loops: Int, log: ServerLog = ServerLog(),
                loop: EventLoop? = nil, listeners: ServerListeners? = nil) throws(IOError) {
        let count = max(1, loops)
        let configuration = configuration.fittedToOpenFiles(loops: count, store: store, log: log)
        guard count > 1 else {
            servers = [try Server(configuration: configuration, store: store, log: log, loop: loop, shard: nil,
                                  listeners: listeners)]
            router = nil
            return
        }
        let router = ShardRouter(count: count, inboxHighWater: configuration.relayInboxHighWater,
                                 wrongTokensPerMinute: configuration.deviceFailuresPerMinute,
                                 connectionsPerAddress: configuration.maximumConnectionsPerAddress,
                                 capsLoopback: configuration.capsLoopbackPerAddress,
                                 cheerLimits: CheerLimits(configuration))
        let first = try Server(configuration: configuration, store: store, log: log, loop: loop,
                               shard: ShardPlacement(router: router, index: 0, port: 0, httpPort: nil),
                               listeners: listeners)
        var servers = [first]
        for index in 1..<count {
            servers.append(try Server(configuration: configuration, store: store, log: log, loop: nil,
                                      shard: ShardPlacement(router: router, index: index, port: first.port,
                                                            httpPort: first.httpPort)))
        }
        router.attach(servers)
        // One commit handler for the store: every loop hears every receipt (each acts on its own runs).
        store.setCommitHandler { [servers] receipt in
            for server in servers { server.loop.execute { server.core.value.committed(receipt) } }
        }
        self.servers = servers
        self.router = router
        log.write("\(count) event loops")
    }

    /// The loop that owns a runner (0 with one loop): which loop measures its runs.
    public func loopIndex(ofRunner name: String) -> Int {
        router?.owner(of: name) ?? 0
    }

    /// The loop that owns a runner in any server of `loops` loops (the same in every process).
    public static func loopIndex(ofRunner name: String, loops: Int) -> Int {
        ShardRouter.shardIndex(of: name, count: max(1, loops))
    }

    /// Starts every loop but the first on its own thread, then serves the first on the calling thread until
    /// shut down; returns once every loop has stopped.
    public func run() throws(IOError) {
        for server in servers.dropFirst() { try server.start() }
        try servers[0].run()
        for server in servers.dropFirst() { server.waitUntilStopped() }
    }

    /// Starts every loop on its own thread and returns once they accept connections.
    public func start() throws(IOError) {
        // The listening loop last: no connection is dealt to a loop that is not running yet.
        for server in servers.reversed() { try server.start() }
    }

    /// Shuts every loop down from any thread and waits (runs ended and saved, as ``Server/shutdown()``).
    public func shutdown() {
        beginShutdown()
        waitUntilStopped()
    }

    /// Asks every loop to shut down; returns at once. Every loop ends its runs first; once each has also handled
    /// what the others relayed meanwhile (their `end:` lines for its followers), the store is flushed and every
    /// loop closes its connections and stops.
    public func beginShutdown() {
        guard servers.count > 1 else {
            let server = servers[0]
            return server.loop.execute { server.core.value.beginShutdown() }
        }
        let servers = self.servers
        Thread.detachNewThread {
            let started = Mutex(false)
            Self.onEveryLoop(servers) { server in
                if server.core.value.endRunsForShutdown() { started.withLock { $0 = true } }
            }
            guard started.withLock({ $0 }) else { return }  // a shutdown is already under way
            // Tasks run in order: the relays the first round posted are handled before this round.
            Self.onEveryLoop(servers) { $0.core.value.flushPending() }
            servers[0].store.flush()
            for server in servers { server.loop.execute { server.core.value.closeEverything() } }
        }
    }

    /// Runs `work` on every loop and waits until all have.
    private static func onEveryLoop(_ servers: [Server], _ work: @escaping @Sendable (Server) -> Void) {
        let done = DispatchGroup()
        for server in servers {
            done.enter()
            server.loop.execute {
                work(server)
                done.leave()
            }
        }
        done.wait()
    }

    /// Blocks until every loop has stopped; then leaves the cluster (its runs were ended and saved).
    public func waitUntilStopped() {
        for server in servers { server.waitUntilStopped() }
        clusterNode.withLock { $0 }?.close()
    }

    /// Makes this server a node of a cluster (`serve --cluster`): the loops' events go on the bus, the other
    /// nodes' come in, runs are leased, and a runner whose node died is taken over here when it says `iam:`
    /// (see ``ClusterNode``). Runs left live in the store are not recovered at start: in a cluster they are
    /// taken over when their runners come back. Call before ``start()`` or ``run()``; throws for a bad URL.
    public func joinCluster(_ settings: ClusterSettings) throws(BusError) {
        let node = try ClusterNode(settings: settings, inboxHighWater: servers[0].configuration.relayInboxHighWater,
                                   log: servers[0].logger)
        let router = self.router
        node.attach(servers, store: servers[0].store, owner: { runner in router?.owner(of: runner) ?? 0 })
        for server in servers {
            // Before the loops run: this thread may still set them up.
            server.core.value.cluster = node
            server.core.value.hub.share(sequence: { node.nextSequence() })
        }
        clusterNode.withLock { $0 = node }
        servers[0].logger.write("cluster node \(settings.node) on \(node.bus.endpoint)")
    }
}
