/// A point on the Earth's surface in degrees (WGS84).
public struct Coordinate: Sendable, Hashable, Codable {
    /// Latitude in degrees, -90...90.
    public var latitude: Double
    /// Longitude in degrees, -180...180.
    public var longitude: Double

    /// Creates a coordinate from degrees.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// One GPS fix as a phone reports it.
public struct Fix: Sendable, Hashable, Codable {
    /// Latitude in degrees.
    public var latitude: Double
    /// Longitude in degrees.
    public var longitude: Double
    /// Horizontal accuracy in metres (radius of the 68% circle, as phones report it).
    public var accuracy: Double
    /// Unix time in seconds (fractions allowed).
    public var timestamp: Double
    /// Altitude in metres as the device reports it (GPS or barometric; above sea level or the ellipsoid, as the
    /// device gives it: only differences are used), nil when it reports none.
    public var altitude: Double?

    /// Creates a fix.
    public init(latitude: Double, longitude: Double, accuracy: Double, timestamp: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.timestamp = timestamp
        self.altitude = altitude
    }

    /// Altitudes a fix may carry, metres: a deeper or higher one from a file or an app is a fault, dropped
    /// (the position still counts), so no overflow or 300-digit figure reaches the meters, stores and exports.
    public static let plausibleAltitudes: ClosedRange<Double> = -20_000...20_000

    /// The fix's position.
    public var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}

/// Why a fix was not accepted into a run. Raw values are the names used on the wire and in storage.
public enum FixRejection: String, Sendable, Hashable, Codable, CaseIterable {
    /// Accuracy at or above the limit, negative, NaN or infinite.
    case inaccurate
    /// Coordinates out of range, NaN/infinite, or exactly 0,0.
    case invalid
    /// Same timestamp as the last accepted fix.
    case duplicate
    /// Older than the last accepted fix.
    case outOfOrder = "out_of_order"
    /// Too far ahead of the clock.
    case future
    /// A cached position at the start of a run (older than the start allowance).
    case stale
    /// Implies a speed above the running limit from the last accepted fix.
    case jump
}

/// What happened to one fix given to a ``RunTracker``.
public enum FixOutcome: Sendable {
    /// The fix was filtered out; the run is unchanged.
    case rejected(FixRejection)
    /// The fix was accepted; the progress says what changed.
    case accepted(RunProgress)
    /// A stale first fix, held as the run's possible start: the next fix says whether it began a recording sent
    /// late (the run starts at it) or was a cached position (then counted `stale`). See
    /// ``FilterConfiguration/recordingGap``.
    case held
}
