/// How a ``ClusterBus`` behaves: its node's name, its queue, its batches, how long streams are and how it
/// reconnects. Every field has a default fit for a node of a few thousand runners.
public struct ClusterBusConfiguration: Sendable {
    /// This node's name: written into every entry it publishes (``nodeField``) so that its own reader drops
    /// its echoes, and shown in notices. Every node of a cluster needs its own.
    public var node: String

    /// Entries the publish queue holds (waiting or in flight) before ``ClusterBus/publish(stream:fields:alsoTo:)``
    /// refuses more: while Redis is down the queue fills, then publishing reports back-pressure.
    public var publishQueueCapacity = 40_000
    /// Past this many entries the bus is backlogged (``ClusterBus/isBacklogged(adding:)``): the server stops reading
    /// fixes, so that the events already on their way still fit below the capacity and none is dropped.
    public var publishQueueHighWater = 20_000
    /// Once the queue has been backlogged, ``ClusterBusNotice/publishQueueDrained`` is sent when it is back to
    /// this many entries (the server then reads fixes again).
    public var publishQueueLowWater = 10_000

    /// The capacity `capacity` with the high- and low-water marks at a half and a quarter of it.
    public mutating func setPublishQueue(capacity: Int) {
        publishQueueCapacity = max(4, capacity)
        publishQueueHighWater = publishQueueCapacity / 2
        publishQueueLowWater = publishQueueCapacity / 4
    }
    /// How long the publisher waits, once something is queued, for more before it sends (seconds): under load
    /// each stream entry then packs a millisecond's events rather than whatever came since the last round
    /// trip, which keeps Redis's work per event low and its latency steady; an event waits that much longer.
    public var publishLinger = 0.001
    /// Entries taken from the queue for one pipeline (one round trip), what they hold for one stream packed
    /// into one stream entry: the more a pass takes, the fewer and larger the entries (Redis's cost is per
    /// entry far more than per byte). With 64 partitions (`moonrunner-bench bus`, before the linger): 8,192
    /// carried about 300,000 events/s, where 2,048 carried about 240,000.
    public var publishBatchSize = 8_192

    /// `MAXLEN ~` of the stream an entry is published to (a runner's stream, the cluster stream): how much a
    /// reader that was away can catch up on.
    public var streamLength = 2_000
    /// `MAXLEN ~` of the stream an entry is also added to (the stream of every runner: it takes every event
    /// of every node, so it is longer).
    public var alsoToStreamLength = 100_000
    /// Streams published to expire this long after their last entry (`PEXPIRE`), so that the streams of
    /// runners long gone do not stay in Redis forever; nil: they stay.
    public var streamExpiry: Double? = 24 * 3600

    /// Entries read per stream per `XREAD` (one batch to the callback holds at most this many per stream).
    public var readCount = 1_000
    /// How long one `XREAD BLOCK` waits for new entries. A change of subscriptions wakes it at once (through
    /// this node's wake stream), so this only bounds how long a dead connection can go unnoticed with no traffic.
    public var readBlockTimeout = 2.0

    /// Seconds to wait for a TCP connection to Redis.
    public var connectTimeout = 2.0
    /// Seconds to wait for a reply (for `XREAD BLOCK`, on top of the block time).
    public var commandTimeout = 5.0
    /// The first delay before reconnecting after a failure; it doubles (with ±20 % jitter, so that nodes
    /// do not reconnect in step) up to ``reconnectMaximumDelay``.
    public var reconnectInitialDelay = 0.1
    /// The longest delay between two connection attempts.
    public var reconnectMaximumDelay = 5.0

    /// The field that carries the publishing node's name in every entry.
    public var nodeField = "_node"
    /// The prefix of the keys the bus keeps for itself: each bus instance's publish counter (which makes a
    /// batch resent after a reconnect land once) and its wake stream.
    public var internalKeyPrefix = "moonrunner:bus:"

    /// The defaults, for node `node`.
    public init(node: String) {
        self.node = node
    }
}
