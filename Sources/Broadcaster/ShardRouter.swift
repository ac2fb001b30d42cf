import LiveCore
import Synchronization

/// What the loops of one server (`serve --loops N`) share: who owns which runner, the event numbering, and
/// the bounded queues between them.
///
/// Each loop (a ``Server`` shard) owns its connections and the runners whose names hash to it. A runner's
/// connection moves to its owner when it says `iam:`; a phone app's HTTP connection when it posts. Events go
/// from the owner to the other loops in one batch per turn (``RelayMessage``), each loop's inbox bounded by
/// ``inboxHighWater``: over the mark, an owner stops reading its runners' fixes (as it does for the store)
/// until the inbox drains. Every field is immutable or atomic: any loop thread may use it.
final class ShardRouter: Sendable {
    /// How many loops serve.
    let count: Int
    /// Relayed events one loop may have waiting in its inbox before the loops feeding it stop reading fixes;
    /// they read again below ``inboxLowWater``.
    let inboxHighWater: Int
    let inboxLowWater: Int
    /// The loops, by index; set once by ``ServerGroup`` before any of them runs, read-only afterwards.
    private let shards: Mutex<[Server]> = Mutex([])
    /// Events waiting in each loop's inbox (sent, not yet handled).
    private let inboxDepths: [InboxDepth]
    /// Numbers every broadcast event across the loops (an event stream's `id:`), so a browser that
    /// reconnects to another loop resumes with the same numbers.
    private let sequence = Atomic<UInt64>(ServerCore.clockEventNumber())
    /// Open line-protocol and HTTP connections across the loops (each kind has one limit for the whole server).
    let lineConnections = Atomic<Int>(0)
    let httpConnections = Atomic<Int>(0)
    /// Sockets the first loop accepted and posted to another, not adopted there yet (line, HTTP): counted with
    /// the open ones against the limits, or an accept burst would take in more than the descriptors allow.
    let postedLineConnections = Atomic<Int>(0)
    let postedHTTPConnections = Atomic<Int>(0)
    /// The next loop an accepted connection goes to (round robin).
    private let nextLoop = Atomic<Int>(0)

    /// Wrong device tokens per source address, for all the loops.
    let wrongTokens: WrongTokenLimiter
    /// Open connections per source address, for all the loops (counted where accepted, given back where closed).
    let connectionsPerAddress: ConnectionsPerAddress
    /// The cheer limits of all the loops (a flood's connections land on every loop); nil for a router made
    /// without a configuration (tests).
    let cheerLimits: CheerLimits?

    /// A router for `count` loops.
    init(count: Int, inboxHighWater: Int = 65_536, wrongTokensPerMinute: Int = 20, connectionsPerAddress: Int? = nil,
         capsLoopback: Bool = false, cheerLimits: CheerLimits? = nil) {
        precondition(count >= 1)
        self.cheerLimits = cheerLimits
        wrongTokens = WrongTokenLimiter(perMinute: wrongTokensPerMinute)
        self.connectionsPerAddress = ConnectionsPerAddress(limit: connectionsPerAddress, countsLoopback: capsLoopback)
        self.count = count
        self.inboxHighWater = inboxHighWater
        inboxLowWater = inboxHighWater / 4
        inboxDepths = (0..<count).map { _ in InboxDepth() }
    }

    /// Counts sockets posted to another loop (`delta` 1) or adopted there (-1).
    func countPosted(http: Bool, _ delta: Int) {
        if http { postedHTTPConnections.add(delta, ordering: .relaxed) } else { postedLineConnections.add(delta, ordering: .relaxed) }
    }

    /// Registers the loops (once, before they run).
    func attach(_ servers: [Server]) {
        precondition(servers.count == count)
        shards.withLock { $0 = servers }
    }

    /// The loop with index `index`.
    func shard(_ index: Int) -> Server {
        shards.withLock { $0[index] }
    }

    /// The loop that owns a runner: FNV-1a of the name's UTF-8, so it is the same in every process and run.
    func owner(of name: String) -> Int {
        Self.shardIndex(of: name, count: count)
    }

    /// The loop index of a name among `count` loops.
    static func shardIndex(of name: String, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }

    /// The number of the next broadcast event.
    func nextSequence() -> UInt64 {
        sequence.add(1, ordering: .relaxed).newValue
    }

    /// The loop the next accepted connection goes to.
    func takeNextLoop() -> Int {
        nextLoop.add(1, ordering: .relaxed).oldValue % count
    }

    /// Queues messages for a loop and wakes it. `events` is how many of them count against its inbox.
    func post(_ messages: [RelayMessage], events: Int, to index: Int) {
        inboxDepths[index].events.add(events, ordering: .relaxed)
        let target = shard(index)
        target.loop.execute { [messages] in target.core.value.receiveRelayed(messages, events: events) }
    }

    /// Marks `events` of a loop's inbox handled; returns the depth left.
    func drained(_ events: Int, at index: Int) -> Int {
        inboxDepths[index].events.subtract(events, ordering: .relaxed).newValue
    }

    /// The deepest inbox of the loops other than `index`.
    func deepestInbox(except index: Int) -> Int {
        var deepest = 0
        for other in 0..<count where other != index {
            deepest = max(deepest, inboxDepths[other].events.load(ordering: .relaxed))
        }
        return deepest
    }
}

/// One loop's inbox depth (an atomic cannot sit in an array by itself).
private final class InboxDepth: Sendable {
    let events = Atomic<Int>(0)
}
