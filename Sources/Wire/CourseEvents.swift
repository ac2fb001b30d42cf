/// Where a runner on a course is, as `pace:` carries it: `along=M togo=M [next_point="NAME" next_point_eta=UNIX
/// point_etas=UNIX,UNIX,…]`.
public struct PaceCourse: Sendable, Hashable {
    /// The most points ahead `point_etas` lists (the nearest ones): a marathon's kilometre marks and aid
    /// stations, while a course with hundreds of points does not make every pace line kilobytes long.
    /// `/api/runners/NAME` has them all.
    public static let maximumPointETAs = 60

    /// Metres along the course.
    public var along: Double
    /// Metres to the finish along the course.
    public var togo: Double
    /// The next course point's name; nil when every point is passed.
    public var nextPoint: String?
    /// Predicted unix time at the next point; nil (`-`) while the pace model has too little to go on.
    public var nextPointETA: Double?
    /// Predicted unix times at every point still ahead, in course order, the first being the next point's
    /// (`point_etas=`; nil is `-`, while the pace model has too little to go on): at most
    /// ``maximumPointETAs``, the nearest. Empty past the last point.
    public var pointETAs: [Double?]

    /// Creates the fields (`pointETAs` is cut to ``maximumPointETAs``).
    public init(along: Double, togo: Double, nextPoint: String? = nil, nextPointETA: Double? = nil,
                pointETAs: [Double?] = []) {
        self.along = along
        self.togo = togo
        self.nextPoint = nextPoint
        self.nextPointETA = nextPointETA
        self.pointETAs = Array(pointETAs.prefix(Self.maximumPointETAs))
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
