/// The stream layout the server uses on the bus (the bus itself carries any stream names), for the cluster
/// called NAME (`moonrunner` unless `--cluster-name` says otherwise):
///
/// - `NAME:part:K`, K in `0 ..< partitions`: every event (`run:`, `pace:`, `badge:`, cheers, `end:`) and
///   change of the runners whose names hash to K (``partition(of:)``), published by the node that owns each
///   run. A node reads the partitions of the runners its connections follow by name, and only those.
///   Partitions rather than a stream per runner: what one publish batch has for a partition goes in one stream
///   entry (``ClusterBus``'s packing), and a node that follows thousands of runners reads a bounded number of
///   streams.
/// - `NAME:cluster`, which every node reads: the same news (published there too, as entries of their own),
///   except that a runner's paces come at most once a second. It keeps every node's mirror of every live run
///   (`watch:*`, `coach:*`, the overview, `leaders:`, late joiners, runner claims and device tokens) without
///   every node reading every pace: a node with no follower of a runner reads its summary only.
///
/// A node takes a runner's events from its partition when it reads that partition, otherwise from the
/// cluster stream (``ClusterNode``, where the owner's number on each event makes one read twice count once).
/// Two entries rather than one in both streams under one id (`alsoTo`): a partition's events would then pack
/// only between two that go to the cluster stream too.
/// Order is kept where it matters: a runner's events come from the one node that owns the run, in order, into
/// one partition (a runner's share tokens with its events).
///
/// Failover: when a run moves to another node (its node died, the lease expired), the new owner publishes
/// into the same partition, after the old owner's last entry; readers go on from where they were.
public struct ClusterStreams: Sendable, Hashable {
    /// The cluster's name when none is given.
    public static let defaultNamespace = "moonrunner"

    /// The cluster's name (`serve --cluster-name`): every stream is `NAME:…`, so clusters that share one Redis
    /// never read each other's events.
    public let namespace: String

    /// How many partition streams the runners are spread over: enough that a node following a few runners
    /// reads a small share of the cluster's events (a partition holds about one runner in 64), few enough
    /// that a busy node's publish batch still packs many events per partition and a node following many
    /// runners reads a bounded number of streams (`moonrunner-bench bus`, before the publisher's linger: 64
    /// carried about 300,000 events/s, 256 about 270,000 with a paced p99 three times as long). Every node of
    /// a cluster must use the same.
    public let partitions: Int
    /// The partitions' stream names, made once: a node names a runner's partition for every event it
    /// publishes and reads.
    private let partitionNames: [String]

    /// The partitions when none are given.
    public static let defaultPartitions = 64

    /// The layout of the cluster called `namespace`, its runners over `partitions` streams.
    public init(namespace: String = ClusterStreams.defaultNamespace, partitions: Int = ClusterStreams.defaultPartitions) {
        self.namespace = namespace
        self.partitions = max(1, partitions)
        partitionNames = (0..<self.partitions).map { namespace + ":part:" + String($0) }
    }

    /// The prefix of every stream of the layout.
    public var prefix: String { namespace + ":" }

    /// The stream every node reads: every runner's news, paces at most once a second per runner.
    public var cluster: String { prefix + "cluster" }

    /// The partition a runner's events go to: its name's FNV-1a hash (the same on every node and in every
    /// version, unlike Swift's seeded `hashValue`) modulo ``partitions``.
    public func partition(of runner: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in runner.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return Int(hash % UInt64(partitions))
    }

    /// The stream of partition `index`.
    public func partitionStream(_ index: Int) -> String {
        partitionNames[index]
    }

    /// The stream a runner's events go to (its partition's).
    public func stream(of runner: String) -> String {
        partitionStream(partition(of: runner))
    }

    /// The partitions (their stream names) of `runners`.
    public func partitionStreams(of runners: some Sequence<String>) -> Set<String> {
        Set(runners.map(stream(of:)))
    }
}
