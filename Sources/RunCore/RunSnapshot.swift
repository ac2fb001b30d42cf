/// The live measurements of a run after its latest accepted fix.
public struct RunSnapshot: Sendable, Hashable, Codable {
    /// Distance in metres (live values may settle within the smoothing lag).
    public var distance: Double
    /// Seconds since the first accepted fix.
    public var elapsed: Double
    /// Seconds spent moving (auto-pause excludes standing still).
    public var movingTime: Double
    /// Average pace in seconds per kilometre over the moving time; nil until there is distance.
    public var averagePace: Double?
    /// Pace over the recent window in seconds per kilometre; nil when standing still or too early.
    public var currentPace: Double?
    /// The current (smoothed) position.
    public var coordinate: Coordinate
    /// Unix time of the latest accepted fix.
    public var timestamp: Double
    /// The next badge strictly farther than the distance, nil past the last one.
    public var nextBadge: Badge?
    /// Metres left to the next badge (0 when there is none).
    public var distanceToNextBadge: Double
    /// Metres climbed so far (see ``ElevationMeter``), nil when no fix had an altitude.
    public var elevationGain: Double?
    /// Metres descended so far, nil when no fix had an altitude.
    public var elevationLoss: Double?

    /// Creates a snapshot.
    public init(distance: Double, elapsed: Double, movingTime: Double, averagePace: Double?, currentPace: Double?,
                coordinate: Coordinate, timestamp: Double, nextBadge: Badge?, distanceToNextBadge: Double,
                elevationGain: Double? = nil, elevationLoss: Double? = nil) {
        self.elevationGain = elevationGain
        self.elevationLoss = elevationLoss
        self.distance = distance
        self.elapsed = elapsed
        self.movingTime = movingTime
        self.averagePace = averagePace
        self.currentPace = currentPace
        self.coordinate = coordinate
        self.timestamp = timestamp
        self.nextBadge = nextBadge
        self.distanceToNextBadge = distanceToNextBadge
    }
}

/// What one accepted fix changed.
public struct RunProgress: Sendable {
    /// True for the fix that started the run.
    public var started: Bool
    /// The measurements now.
    public var snapshot: RunSnapshot
    /// Badges won by this fix, in order (a badge's silver before its gold).
    public var awards: [BadgeAward]
    /// Km and mile splits completed by this fix, in order of distance.
    public var splits: [Split]

    /// Creates a progress value.
    public init(started: Bool, snapshot: RunSnapshot, awards: [BadgeAward], splits: [Split]) {
        self.started = started
        self.snapshot = snapshot
        self.awards = awards
        self.splits = splits
    }
}

/// A finished run, measured on the smoothed track.
public struct RunSummary: Sendable {
    /// Final measurements.
    public var distance: Double
    /// Seconds from first to last accepted fix.
    public var elapsed: Double
    /// Seconds moving.
    public var movingTime: Double
    /// Average pace in s/km over the moving time; nil without distance.
    public var averagePace: Double?
    /// All km and mile splits.
    public var splits: [Split]
    /// Pace between consecutive badges reached.
    public var checkpoints: [CheckpointSplit]
    /// Every award of the run, in order.
    public var awards: [BadgeAward]
    /// The smoothed track the distance was measured on.
    public var track: [Fix]
    /// Fixes filtered out, by reason.
    public var rejections: [FixRejection: Int]
    /// Metres climbed over the run (see ``ElevationMeter``), nil when no fix had an altitude.
    public var elevationGain: Double?
    /// Metres descended over the run, nil when no fix had an altitude.
    public var elevationLoss: Double?

    /// Creates a summary.
    public init(distance: Double, elapsed: Double, movingTime: Double, averagePace: Double?, splits: [Split],
                checkpoints: [CheckpointSplit], awards: [BadgeAward], track: [Fix], rejections: [FixRejection: Int],
                elevationGain: Double? = nil, elevationLoss: Double? = nil) {
        self.elevationGain = elevationGain
        self.elevationLoss = elevationLoss
        self.distance = distance
        self.elapsed = elapsed
        self.movingTime = movingTime
        self.averagePace = averagePace
        self.splits = splits
        self.checkpoints = checkpoints
        self.awards = awards
        self.track = track
        self.rejections = rejections
    }
}
