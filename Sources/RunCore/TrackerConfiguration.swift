/// The fix filter's rules. Every rule has a documented default.
public struct FilterConfiguration: Sendable, Hashable {
    /// Fixes whose accuracy is at or above this many metres are rejected (the seed app's rule). Default 20.
    public var maximumAccuracy: Double = 20
    /// How far ahead of the clock a fix's timestamp may be, in seconds. Default 24 h, so fast-replayed runs work.
    public var futureAllowance: Double = 86_400
    /// A first fix older than this many seconds against the clock is a cached position. Default 10.
    public var staleStartAge: Double = 10
    /// The fastest plausible running speed in m/s; faster implied speeds are jumps. Default 12.5.
    public var maximumSpeed: Double = 12.5

    /// Creates the default filter.
    public init() {}
}

/// How a ``RunTracker`` filters, smooths and measures.
public struct TrackerConfiguration: Sendable, Hashable {
    /// The fix filter's rules.
    public var filter = FilterConfiguration()
    /// Seconds of fixed-lag smoothing: live values may change for this long after a fix. Default 10.
    public var smoothingLag: Double = 10
    /// The window for the current pace, in seconds. Default 30.
    public var currentPaceWindow: Double = 30

    /// Creates the default configuration.
    public init() {}
}
