import Foundation
import Locking
import Reactor

/// The cluster's event bus on Redis Streams: what one node publishes, the other nodes read (the layout the
/// server uses is ``ClusterStreams``). Bytes in, bytes out: an entry is a stream name and fields.
///
/// Two threads of its own, each with its own connection, do all the blocking work, so nothing here blocks an
/// event loop:
/// - the **publisher** takes entries from a bounded queue (``publish(stream:fields:alsoTo:)`` never waits; a
///   full queue is back-pressure) and adds them with ``PublishScript`` (`XADD … MAXLEN ~ N`), a pipelined
///   batch per round trip, what a batch holds for one stream packed into one stream entry (so a busy node
///   writes few, large entries: Redis's cost is per entry far more than per byte); while Redis is down the
///   entries wait in the queue and go once it is back;
/// - the **reader** runs `XREAD BLOCK` on the subscribed streams (a set the server changes at any time:
///   ``subscribe(_:from:)``, ``setSubscriptions(_:newFrom:)``), drops this node's own entries (echoes) and
///   gives the rest to `onEntries`, in batches, in stream order, with each entry's id. After a reconnect it
///   resumes after the last id it read, so nothing is missed while the streams still hold it.
///
/// Both reconnect with exponential backoff and report through `onNotice`. ``close(flushTimeout:)`` stops them;
/// the threads hold the bus until then, so a bus must be closed.
public final class ClusterBus: Sendable {
    /// Where Redis is.
    public let endpoint: RedisEndpoint
    /// How the bus behaves.
    public let configuration: ClusterBusConfiguration
    /// This bus instance's name in Redis keys: the node's name and a random part (a restarted node is a new
    /// instance, with its own publish counter).
    let instance: String
    let onEntries: @Sendable ([BusEntry]) -> Void
    let onNotice: @Sendable (ClusterBusNotice) -> Void

    /// The publish queue (waited on by the publisher thread and by flush/close).
    let publishing = Locked(PublishQueue())
    /// The subscriptions (waited on by the reader thread and awaitSubscriptions).
    let reading = Locked(Subscriptions())
    /// The connections' sockets, for close() to shut them down (which makes a blocked call return at once);
    /// each thread clears its own before dropping its connection.
    let sockets = Locked(Sockets())

    /// What a thread's lock guards, as far as closing goes: ``close()`` sets it, and the thread ends.
    protocol ClosingState { var closing: Bool { get } }

    /// What ``publishing`` guards.
    struct PublishQueue: ClosingState {
        /// Queued entries from `head` on; the first ones may be in flight (removed once Redis has them).
        var entries: [OutgoingEntry] = []
        var head = 0
        var nextSequence: UInt64 = 1
        /// True when the reader must be woken (subscriptions changed): the publisher adds to the wake stream.
        var wakePending = false
        /// Set past the high-water mark (or full), cleared at the low-water mark: ``isBacklogged(adding:)``.
        var isBacklogged = false
        var closing = false
        var counts = ClusterBusStatistics()

        /// Entries queued and not yet in Redis.
        var count: Int { entries.count - head }
    }

    /// What ``reading`` guards.
    struct Subscriptions: ClosingState {
        var streams: [String: Subscription] = [:]
        var nextToken = 0
        /// Bumped at each change; `appliedGeneration` is the one the reader last took up.
        var generation = 0
        var appliedGeneration = 0
        var closing = false
        var counts = ClusterBusStatistics()

        /// A token for a new subscription.
        mutating func takeToken() -> Int {
            nextToken += 1
            return nextToken
        }
    }

    /// What ``sockets`` guards.
    struct Sockets {
        var open: [ClusterBusNotice.Role: StreamSocket] = [:]
        var closed = false
        var threadsRunning = 0
    }

    /// One subscribed stream: where its reader stands, and a token that tells a later subscription to the
    /// same stream from this one (entries read for an old one are dropped).
    struct Subscription {
        var position: StreamPosition
        let token: Int
    }

    /// Starts a bus on the Redis at `url` (`redis://HOST:PORT`): its threads start now and connect in the
    /// background (a Redis that is down is not an error here: the bus retries and says so in `onNotice`).
    /// `onEntries` gets what the reader reads, on the reader thread (it may block to slow the reader down;
    /// Redis keeps the entries); `onNotice` gets connection changes and back-pressure, on either thread.
    public init(url: String, configuration: ClusterBusConfiguration,
                onEntries: @escaping @Sendable ([BusEntry]) -> Void,
                onNotice: @escaping @Sendable (ClusterBusNotice) -> Void = { _ in }) throws(BusError) {
        endpoint = try RedisEndpoint(url: url)
        guard !configuration.node.isEmpty else { throw BusError(.badURL, "the bus needs a node name") }
        self.configuration = configuration
        self.onEntries = onEntries
        self.onNotice = onNotice
        instance = configuration.node + ":" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        sockets.withLock { $0.threadsRunning = 2 }
        let publisher = Thread { [self] in
            publishLoop()
            threadEnded()
        }
        publisher.name = "ClusterBus publisher"
        publisher.start()
        let reader = Thread { [self] in
            readLoop()
            threadEnded()
        }
        reader.name = "ClusterBus reader"
        reader.start()
    }

    // MARK: Publishing

    /// Queues an entry for `stream` (and, with `alsoTo`, for that stream too, under the same id: see
    /// ``PublishScript``); any thread, never blocks. Readers get a stream's entries in the order they were
    /// queued; entries of different streams queued within a few milliseconds of each other may come in another
    /// order (a batch's entries go stream by stream). Field names starting with `_` are the bus's own.
    ///
    /// Returns false when the queue is full (the entry is dropped) or the bus is closed. Before that, past
    /// ``ClusterBusConfiguration/publishQueueHighWater``, ``isBacklogged(adding:)`` says to stop making entries (the
    /// server stops reading fixes) until ``ClusterBusNotice/publishQueueDrained``: back-pressure before drops.
    @discardableResult
    public func publish(stream: String, fields: [(String, [UInt8])], alsoTo: String? = nil) -> Bool {
        let capacity = configuration.publishQueueCapacity, highWater = configuration.publishQueueHighWater
        let (queued, first) = publishing.withLock { queue -> (Bool, Bool) in
            guard !queue.closing else { return (false, false) }
            guard queue.count < capacity else {
                queue.isBacklogged = true
                queue.counts.droppedFull += 1
                return (false, false)
            }
            queue.entries.append(OutgoingEntry(stream: stream, alsoTo: alsoTo, fields: fields, sequence: queue.nextSequence))
            queue.nextSequence += 1
            if queue.count > highWater { queue.isBacklogged = true }
            return (true, queue.count == 1)
        }
        if first { publishing.broadcast() }
        return queued
    }

    /// True from when the publish queue passed its high-water mark (Redis slow or away) until it is back at
    /// its low-water mark (``ClusterBusNotice/publishQueueDrained``), or when `pending` more entries, made and
    /// not yet published (a loop turn's), would take it past: publishers should make no more entries they can
    /// hold back (the server reads no more fixes) meanwhile.
    public func isBacklogged(adding pending: Int = 0) -> Bool {
        let highWater = configuration.publishQueueHighWater
        return publishing.withLock { $0.isBacklogged || $0.count + pending > highWater }
    }

    /// Waits until every entry queued so far is in Redis, at most `timeout` seconds; false on timeout. Blocks:
    /// for tests, benchmarks and shutdown, never on an event loop.
    public func flush(timeout: Double) -> Bool {
        let last = publishing.withLock { $0.nextSequence - 1 }
        let isSent = { (queue: PublishQueue) in queue.entries[queue.head...].first.map { $0.sequence > last } ?? true }
        return publishing.withLock(when: isSent, before: Date(timeIntervalSinceNow: timeout)) { _, sent in sent }
    }

    // MARK: Subscribing

    /// Adds `stream` to the streams read, from `position`. A stream already read keeps its place.
    public func subscribe(_ stream: String, from position: StreamPosition = .new) {
        changeSubscriptions { set in
            if set.streams[stream] == nil { set.streams[stream] = Subscription(position: position, token: set.takeToken()) }
        }
    }

    /// Stops reading `stream` (entries of it read meanwhile are dropped).
    public func unsubscribe(_ stream: String) {
        changeSubscriptions { set in set.streams[stream] = nil }
    }

    /// Reads exactly `streams` from now on: streams already read keep their place, new ones start at `position`.
    public func setSubscriptions(_ streams: Set<String>, newFrom position: StreamPosition = .new) {
        changeSubscriptions { set in
            set.streams = set.streams.filter { streams.contains($0.key) }
            for stream in streams where set.streams[stream] == nil {
                set.streams[stream] = Subscription(position: position, token: set.takeToken())
            }
        }
    }

    /// The streams read now.
    public var subscriptions: Set<String> {
        reading.withLock { Set($0.streams.keys) }
    }

    /// The id after which the reader goes on in `stream` (the last entry it read, or where it starts);
    /// nil when `stream` is not read, or its `.new` start is not resolved yet.
    public func position(of stream: String) -> StreamID? {
        switch reading.withLock({ $0.streams[stream]?.position }) {
        case .after(let id): return id
        case .beginning: return .zero
        default: return nil
        }
    }

    /// Waits until the reader has taken up the latest subscription change (its `.new` starts resolved), at
    /// most `timeout` seconds; false on timeout (Redis down). Blocks: for tests and benchmarks.
    public func awaitSubscriptions(timeout: Double) -> Bool {
        let wanted = reading.withLock { $0.generation }
        return reading.withLock(when: { $0.appliedGeneration >= wanted }, before: Date(timeIntervalSinceNow: timeout)) {
            _, applied in applied
        }
    }

    private func changeSubscriptions(_ change: (inout Subscriptions) -> Void) {
        reading.withLock { set in
            change(&set)
            set.generation += 1
        }
        reading.broadcast()
        // The reader may be blocked in XREAD on the old set: an entry in its wake stream ends that.
        publishing.withLock { $0.wakePending = true }
        publishing.broadcast()
    }

    // MARK: State

    /// What the bus has done so far.
    public var statistics: ClusterBusStatistics {
        var counts = publishing.withLock { queue in
            var counts = queue.counts
            counts.queued = queue.count
            return counts
        }
        reading.withLock { set in
            counts.received = set.counts.received
            counts.receivedEntries = set.counts.receivedEntries
            counts.echoesDropped = set.counts.echoesDropped
            counts.reconnects += set.counts.reconnects
        }
        return counts
    }

    /// Stops the bus: waits up to `flushTimeout` seconds for the queue to reach Redis, then stops both threads
    /// (a call blocked on Redis is cut short) and closes the connections. Entries still queued are dropped;
    /// later publishes return false. Blocks until the threads are gone.
    public func close(flushTimeout: Double = 2) {
        if flushTimeout > 0 { _ = flush(timeout: flushTimeout) }
        publishing.withLock { $0.closing = true }
        publishing.broadcast()
        reading.withLock { $0.closing = true }
        reading.broadcast()
        // Under the lock: a thread forgets its socket (under it) before freeing it, so none is shut down after.
        sockets.withLock { sockets in
            sockets.closed = true
            for socket in sockets.open.values { socket.shutdown() }
        }
        sockets.withLock(when: { $0.threadsRunning == 0 }) { _ in }
    }

    // MARK: Connections (for both threads)

    /// A new connection for `role`, its socket registered for close(); nil when the bus is closing.
    func connect(_ role: ClusterBusNotice.Role, timeout: Double) throws(BusError) -> RedisConnection? {
        let connection = try RedisConnection(endpoint: endpoint, connectTimeout: configuration.connectTimeout,
                                             commandTimeout: timeout)
        let registered = sockets.withLock { sockets in
            guard !sockets.closed else { return false }
            sockets.open[role] = connection.streamSocket
            return true
        }
        return registered ? connection : nil
    }

    /// After an attempt of `role`'s thread failed: tells of it and waits out the backoff, or less if the bus closes
    /// meanwhile. False when the bus is closing: the thread ends instead.
    func waitToRetry<State: ClosingState>(_ role: ClusterBusNotice.Role, after error: BusError,
                                          backoff: inout ReconnectBackoff, on lock: Locked<State>) -> Bool {
        guard !lock.withLock({ $0.closing }) else { return false }
        let delay = backoff.failed()
        onNotice(.disconnected(role, error, retryIn: delay))
        lock.withLock(when: { $0.closing }, before: Date(timeIntervalSinceNow: delay)) { _, _ in }
        return true
    }

    /// Forgets `role`'s socket before its connection is freed (so close() never shuts down a reused number).
    func disconnect(_ role: ClusterBusNotice.Role) {
        sockets.withLock { $0.open[role] = nil }
    }

    private func threadEnded() {
        sockets.withLock { $0.threadsRunning -= 1 }
        sockets.broadcast()
    }
}
