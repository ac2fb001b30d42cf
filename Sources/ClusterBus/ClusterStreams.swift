/// The stream layout the server uses on the bus (the bus itself carries any stream names), for the cluster
/// called NAME (`moonrunner` unless `--cluster-name` says otherwise):
///
/// - `NAME:run:RUNNER`, one per runner: that runner's events (`run:`, `pace:`, `badge:`, cheers, `end:`),
///   published by the node that owns the run. A node reads the streams of the runners its spectators and
///   coaches follow, and only those.
/// - `NAME:runs`, every runner's events, for `watch:*` and `coach:*` and the race overview: each event
///   is added there too, in the same script and under the same id (``ClusterBus/publish(stream:fields:alsoTo:)``
///   with `alsoTo: allRuns`), so a node that reads this stream instead of the runners' streams sees the same
///   ids (the SSE `id`s do not depend on which stream a node happened to read).
/// - `NAME:cluster`: everything every node needs whoever it serves: runners claimed, badge histories
///   changed at the end of a run, device tokens issued and revoked. Every node always reads it.
///
/// Why this layout: a node pays only for the runners it shows (a city race has tens of thousands of runners;
/// a node with one spectator reads one stream), while `watch:*` costs one stream however many runners there
/// are, and XREAD on a few thousand keys is cheap next to reading every event of the cluster. Order is kept
/// where it matters: a runner's events come from the one node that owns the run, in order, into one stream.
/// A node reads either `allRuns` or the runners' streams (``subscriptions(watchingAll:runners:)``), never
/// both: an event is in both, with one id, and would arrive twice.
///
/// Failover: when a run moves to another node (its node died, the lease expired), the new owner publishes
/// into the same runner stream, after the old owner's last entry; readers go on from where they were.
public struct ClusterStreams: Sendable, Hashable {
    /// The cluster's name when none is given.
    public static let defaultNamespace = "moonrunner"

    /// The cluster's name (`serve --cluster-name`): every stream is `NAME:…`, so clusters that share one Redis
    /// never read each other's events.
    public let namespace: String

    /// The layout of the cluster called `namespace`.
    public init(namespace: String = ClusterStreams.defaultNamespace) {
        self.namespace = namespace
    }

    /// The prefix of every stream of the layout.
    public var prefix: String { namespace + ":" }

    /// The stream of every runner's events (what `watch:*` reads).
    public var allRuns: String { prefix + "runs" }

    /// The stream every node reads: runner claims and badge histories, device tokens.
    public var cluster: String { prefix + "cluster" }

    /// The stream of one runner's events.
    public func runner(_ name: String) -> String {
        prefix + "run:" + name
    }

    /// The runner a stream of ``runner(_:)`` belongs to; nil for the other streams.
    public func runnerName(of stream: String) -> String? {
        let runnerPrefix = prefix + "run:"
        guard stream.hasPrefix(runnerPrefix) else { return nil }
        return String(stream.dropFirst(runnerPrefix.count))
    }

    /// The streams a node reads: the cluster stream, and `allRuns` when any of its followers watches every
    /// runner, otherwise the streams of the runners they follow.
    public func subscriptions(watchingAll: Bool, runners: some Sequence<String>) -> Set<String> {
        watchingAll ? [cluster, allRuns] : Set(runners.map(runner)).union([cluster])
    }
}
