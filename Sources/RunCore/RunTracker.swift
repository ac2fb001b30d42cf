/// Takes a run's fixes one at a time and says what happened: filtering, smoothing, metrics, splits, badges.
public struct RunTracker: Sendable {
    /// The configuration in force.
    public let configuration: TrackerConfiguration
    /// The runner's badge history, updated as awards are made.
    public private(set) var history: BadgeHistory
    /// Fixes rejected so far, by reason.
    public private(set) var rejections: [FixRejection: Int] = [:]
    /// Timestamp of the last accepted fix, nil before the run started.
    public private(set) var lastAcceptedTimestamp: Double?

    /// Starts a tracker for one run of a runner with this badge history.
    public init(configuration: TrackerConfiguration = .init(), history: BadgeHistory = .init()) {
        self.configuration = configuration
        self.history = history
    }

    /// Offers one fix; `now` is the receiving clock (unix seconds) for the staleness and future rules.
    public mutating func add(_ fix: Fix, now: Double) -> FixOutcome { fatalError("TODO") }

    /// The latest measurements, nil before the first accepted fix.
    public var snapshot: RunSnapshot? { fatalError("TODO") }

    /// Ends the run: final smoothing of the whole track, then the summary.
    public func finish() -> RunSummary { fatalError("TODO") }
}
