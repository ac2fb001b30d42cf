/// Where a runner on a course is, as `pace:` carries it: `along=M togo=M [next_point="NAME" next_point_eta=UNIX]`.
public struct PaceCourse: Sendable, Hashable {
    /// Metres along the course.
    public var along: Double
    /// Metres to the finish along the course.
    public var togo: Double
    /// The next course point's name; nil when every point is passed.
    public var nextPoint: String?
    /// Predicted unix time at the next point; nil (`-`) while the pace model has too little to go on.
    public var nextPointETA: Double?

    /// Creates the fields.
    public init(along: Double, togo: Double, nextPoint: String? = nil, nextPointETA: Double? = nil) {
        self.along = along
        self.togo = togo
        self.nextPoint = nextPoint
        self.nextPointETA = nextPointETA
    }
}

/// `point:NAME name="…" along=M ts=UNIX time=S` — the runner passed a course point (an aid station, a km mark):
/// `ts` when, `time` seconds after the run's start.
public struct PointEvent: WireEvent {
    /// `point`.
    public static let kind = "point"
    /// The runner.
    public var runner: String
    /// The course point's name.
    public var name: String
    /// Metres along the course of the point.
    public var along: Double
    /// Unix time of the passage.
    public var timestamp: Double
    /// Seconds after the run's start.
    public var elapsed: Double

    /// Creates the event.
    public init(runner: String, name: String, along: Double, timestamp: Double, elapsed: Double) {
        self.runner = runner
        self.name = name
        self.along = along
        self.timestamp = timestamp
        self.elapsed = elapsed
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, name: try event.string("name"), along: try event.double("along"),
                  timestamp: try event.double("ts"), elapsed: try event.double("time"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [
            Event.Field("name", name),
            .number("along", along, NumberFormat.distanceDecimals),
            .number("ts", timestamp, 0),
            .number("time", elapsed, NumberFormat.timeDecimals),
        ])
    }
}
