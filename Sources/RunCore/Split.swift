/// The unit a split is measured in.
public enum SplitUnit: String, Sendable, Hashable, Codable, CaseIterable {
    /// Every full kilometre.
    case kilometre = "km"
    /// Every full mile (1609.344 m).
    case mile = "mi"

    /// The unit's length in metres.
    public var metres: Double { self == .kilometre ? 1000 : 1609.344 }
}

/// The time at one full kilometre or mile, interpolated inside the segment that crosses it.
public struct Split: Sendable, Hashable, Codable {
    /// Kilometres or miles.
    public var unit: SplitUnit
    /// 1 for the first full unit, 2 for the second, …
    public var number: Int
    /// Elapsed run time at the split, seconds.
    public var elapsed: Double
    /// Time taken for this unit alone, seconds.
    public var duration: Double
    /// Pace over this unit in seconds per kilometre.
    public var pace: Double

    /// Creates a split.
    public init(unit: SplitUnit, number: Int, elapsed: Double, duration: Double, pace: Double) {
        self.unit = unit
        self.number = number
        self.elapsed = elapsed
        self.duration = duration
        self.pace = pace
    }
}

/// The pace between two consecutive badges reached in a run.
public struct CheckpointSplit: Sendable, Hashable, Codable {
    /// The badge the stretch starts at (Earth for the first).
    public var from: Badge
    /// The badge the stretch ends at.
    public var to: Badge
    /// Time for the stretch, seconds.
    public var duration: Double
    /// Pace over the stretch in seconds per kilometre.
    public var pace: Double

    /// Creates a checkpoint split.
    public init(from: Badge, to: Badge, duration: Double, pace: Double) {
        self.from = from
        self.to = to
        self.duration = duration
        self.pace = pace
    }
}
