/// A distance badge: a body of the solar system placed at a distance along a run.
public struct Badge: Sendable, Hashable, Codable {
    /// Stable identifier, e.g. `mars`.
    public var id: String
    /// Display name, e.g. `Mars`.
    public var name: String
    /// Distance in metres at which the badge is reached.
    public var distance: Double
    /// A short piece of information about the body.
    public var information: String
}

/// How a badge was won in a run.
public enum BadgeTier: String, Sendable, Hashable, Codable, CaseIterable {
    /// First time the badge's distance was reached.
    case earned
    /// Reached at ≥ 1.05 × the reference checkpoint speed.
    case silver
    /// Reached at ≥ 1.10 × the reference checkpoint speed.
    case gold
    /// Faster at this checkpoint than every earlier run.
    case best
}

/// One award made during a run.
public struct BadgeAward: Sendable, Hashable, Codable {
    /// The badge.
    public var badge: Badge
    /// The tier won.
    public var tier: BadgeTier
    /// Elapsed run time in seconds at the crossing (interpolated).
    public var elapsed: Double
    /// Checkpoint speed in m/s: badge distance / elapsed.
    public var speed: Double
    /// Where the crossing happened (interpolated).
    public var coordinate: Coordinate
    /// Unix time of the crossing (interpolated).
    public var timestamp: Double

    /// Creates an award.
    public init(badge: Badge, tier: BadgeTier, elapsed: Double, speed: Double, coordinate: Coordinate, timestamp: Double) {
        self.badge = badge
        self.tier = tier
        self.elapsed = elapsed
        self.speed = speed
        self.coordinate = coordinate
        self.timestamp = timestamp
    }
}
