/// The stream layout the server uses on the bus (the bus itself carries any stream names), for the cluster
/// called NAME (`moonrunner` unless `--cluster-name` says otherwise):
///
/// - `NAME:part:K`, K in `0 ..< partitions`: the events (`run:`, `pace:`, `badge:`, cheers, `end:`) and
///   changes of the runners whose names hash to K (``partition(of:)``), published by the node that owns each
///   run. Partitions rather than a stream per runner: what one node's loop turn has for a partition goes in
///   one stream entry (``ClusterBus``'s packing), so a busy node writes a few large entries per turn instead
///   of one per event, and a reader of a runner reads its partition.
/// - `NAME:runs`, every runner's events, for the mirror every node keeps of every live run (`watch:*`,
///   `coach:*`, the race overview, late joiners): each entry is added there too, in the same script and under
///   the same id (``ClusterBus/publish(stream:fields:alsoTo:)`` with `alsoTo: allRuns`), so a node that reads
///   a partition instead sees the same ids (the SSE `id`s do not depend on which stream a node read).
/// - `NAME:cluster`: everything every node needs whoever it serves.
///
/// Order is kept where it matters: a runner's events come from the one node that owns the run, in order, into
/// one partition (a runner's changes, share tokens among them, with its events). A node reads either
/// `allRuns` or partitions (``subscriptions(watchingAll:runners:)``), never both: an event is in both, with
/// one id, and would arrive twice.
///
/// Failover: when a run moves to another node (its node died, the lease expired), the new owner publishes
/// into the same partition, after the old owner's last entry; readers go on from where they were.
public struct ClusterStreams: Sendable, Hashable {
    /// The cluster's name when none is given.
    public static let defaultNamespace = "moonrunner"

    /// The cluster's name (`serve --cluster-name`): every stream is `NAME:…`, so clusters that share one Redis
    /// never read each other's events.
    public let namespace: String

    /// How many partition streams the runners are spread over: enough that a node reading the runners its
    /// followers watch reads a small share of the cluster's events, few enough that a turn's events for one
    /// partition are many (they pack into one entry). Every node of a cluster must use the same.
    public let partitions: Int

    /// The partitions when none are given.
    public static let defaultPartitions = 16

    /// The layout of the cluster called `namespace`, its runners over `partitions` streams.
    public init(namespace: String = ClusterStreams.defaultNamespace, partitions: Int = ClusterStreams.defaultPartitions) {
        self.namespace = namespace
        self.partitions = max(1, partitions)
    }

    /// The prefix of every stream of the layout.
    public var prefix: String { namespace + ":" }

    /// The stream of every runner's events (what `watch:*` reads).
    public var allRuns: String { prefix + "runs" }

    /// The stream every node reads: runner claims and badge histories, device tokens.
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
        prefix + "part:" + String(index)
    }

    /// The stream a runner's events go to (its partition's).
    public func stream(of runner: String) -> String {
        partitionStream(partition(of: runner))
    }

    /// The streams a node reads: the cluster stream, and `allRuns` when any of its followers watches every
    /// runner, otherwise the partitions of the runners they follow.
    public func subscriptions(watchingAll: Bool, runners: some Sequence<String>) -> Set<String> {
        watchingAll ? [cluster, allRuns] : Set(runners.map(stream(of:))).union([cluster])
    }
}
