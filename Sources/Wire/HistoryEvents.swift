/// `item:NAME run=ID date=ISO8601 dist=M time=S pace=S_PER_KM` — one saved run in a `runs:` answer.
public struct RunListItemEvent: WireEvent {
    /// `item`.
    public static let kind = "item"
    /// The runner.
    public var runner: String
    /// The run's id (for `run:ID`).
    public var runID: Int64
    /// Start time, ISO 8601 UTC (see `ISODate`).
    public var date: String
    /// Metres.
    public var distance: Double
    /// Seconds from first to last fix.
    public var elapsed: Double
    /// Average pace in s/km; nil (`-`) without distance.
    public var pace: Double?

    /// Creates the event.
    public init(runner: String, runID: Int64, date: String, distance: Double, elapsed: Double, pace: Double?) {
        self.runner = runner
        self.runID = runID
        self.date = date
        self.distance = distance
        self.elapsed = elapsed
        self.pace = pace
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, runID: try event.int64("run"), date: try event.string("date"),
                  distance: try event.double("dist"), elapsed: try event.double("time"),
                  pace: try event.optionalDouble("pace"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [
            .integer("run", runID),
            Event.Field("date", date),
            .number("dist", distance, NumberFormat.distanceDecimals),
            .number("time", elapsed, NumberFormat.timeDecimals),
            .number("pace", pace, NumberFormat.paceDecimals),
        ])
    }
}

/// `summary:NAME run=ID status=live|saved|ended_by_timeout date=ISO8601 dist=M time=S moving=S pace=S_PER_KM filtered=N
/// [gain=M loss=M]` — the first line of a `run:ID` answer; `gain` and `loss` (metres climbed and descended) only
/// when the run's fixes had altitudes.
public struct RunSummaryEvent: WireEvent {
    /// `summary`.
    public static let kind = "summary"
    /// The runner.
    public var runner: String
    /// The run's id.
    public var runID: Int64
    /// `live` while the run is open, then `saved` or `ended_by_timeout` (RunStore's `RunStatus`; a discarded
    /// run is not in history); a word, clients show unknown ones as is.
    public var status: String
    /// Start time, ISO 8601 UTC.
    public var date: String
    /// Metres.
    public var distance: Double
    /// Seconds from first to last fix.
    public var elapsed: Double
    /// Seconds moving.
    public var moving: Double
    /// Average pace in s/km; nil (`-`) without distance.
    public var pace: Double?
    /// Rejected fixes.
    public var filtered: Int
    /// Metres climbed (`gain=`), nil when unknown (the field is then left out).
    public var elevationGain: Double?
    /// Metres descended (`loss=`), nil when unknown.
    public var elevationLoss: Double?

    /// Creates the event.
    public init(runner: String, runID: Int64, status: String, date: String, distance: Double, elapsed: Double,
                moving: Double, pace: Double?, filtered: Int, elevationGain: Double? = nil,
                elevationLoss: Double? = nil) {
        self.elevationGain = elevationGain
        self.elevationLoss = elevationLoss
        self.runner = runner
        self.runID = runID
        self.status = status
        self.date = date
        self.distance = distance
        self.elapsed = elapsed
        self.moving = moving
        self.pace = pace
        self.filtered = filtered
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, runID: try event.int64("run"), status: try event.string("status"),
                  date: try event.string("date"), distance: try event.double("dist"),
                  elapsed: try event.double("time"), moving: try event.double("moving"),
                  pace: try event.optionalDouble("pace"), filtered: try event.int("filtered"),
                  elevationGain: try event.absentOrDouble("gain"), elevationLoss: try event.absentOrDouble("loss"))
    }

    /// The generic form.
    public var event: Event {
        var fields: [Event.Field] = [
            .integer("run", runID),
            Event.Field("status", status),
            Event.Field("date", date),
            .number("dist", distance, NumberFormat.distanceDecimals),
            .number("time", elapsed, NumberFormat.timeDecimals),
            .number("moving", moving, NumberFormat.timeDecimals),
            .number("pace", pace, NumberFormat.paceDecimals),
            .integer("filtered", filtered),
        ]
        if let elevationGain { fields.append(.number("gain", elevationGain, NumberFormat.elevationDecimals)) }
        if let elevationLoss { fields.append(.number("loss", elevationLoss, NumberFormat.elevationDecimals)) }
        return Event(kind: Self.kind, subject: runner, fields: fields)
    }
}

/// `checkpoint:NAME from=BADGE to=BADGE time=S pace=S_PER_KM` — the stretch between two badges in a run.
public struct CheckpointEvent: WireEvent {
    /// `checkpoint`.
    public static let kind = "checkpoint"
    /// The runner.
    public var runner: String
    /// Badge id the stretch starts at (`earth` for the first).
    public var from: String
    /// Badge id the stretch ends at.
    public var to: String
    /// Seconds for the stretch.
    public var duration: Double
    /// Pace over the stretch, s/km.
    public var pace: Double

    /// Creates the event.
    public init(runner: String, from: String, to: String, duration: Double, pace: Double) {
        self.runner = runner
        self.from = from
        self.to = to
        self.duration = duration
        self.pace = pace
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, from: try event.string("from"), to: try event.string("to"),
                  duration: try event.double("time"), pace: try event.double("pace"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [
            Event.Field("from", from),
            Event.Field("to", to),
            .number("time", duration, NumberFormat.timeDecimals),
            .number("pace", pace, NumberFormat.paceDecimals),
        ])
    }
}

/// `board:NAME id=BADGE name="…" dist=M earned=DATE|no silver=DATE|no gold=DATE|no best=PACE|- left=M
/// silver_pace=PACE|- gold_pace=PACE|-` — one badge of a runner's board (`badges:NAME`).
public struct BoardEvent: WireEvent {
    /// `board`.
    public static let kind = "board"
    /// The runner.
    public var runner: String
    /// Badge id.
    public var badgeID: String
    /// Badge display name.
    public var badgeName: String
    /// The badge's distance, metres.
    public var distance: Double
    /// When first earned (ISO 8601), nil (`no`) if never.
    public var earned: String?
    /// When silver was first won, nil (`no`) if never.
    public var silver: String?
    /// When gold was first won, nil (`no`) if never.
    public var gold: String?
    /// Best checkpoint pace at this badge, s/km; nil (`-`) if never reached.
    public var best: Double?
    /// Metres still to run to reach it in one run (0 once earned).
    public var left: Double
    /// The pace needed for silver next time, s/km; nil (`-`) before the badge is earned.
    public var silverPace: Double?
    /// The pace needed for gold next time, s/km; nil (`-`) before the badge is earned.
    public var goldPace: Double?

    /// Creates the event.
    public init(runner: String, badgeID: String, badgeName: String, distance: Double, earned: String?,
                silver: String?, gold: String?, best: Double?, left: Double, silverPace: Double?, goldPace: Double?) {
        self.runner = runner
        self.badgeID = badgeID
        self.badgeName = badgeName
        self.distance = distance
        self.earned = earned
        self.silver = silver
        self.gold = gold
        self.best = best
        self.left = left
        self.silverPace = silverPace
        self.goldPace = goldPace
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, badgeID: try event.string("id"), badgeName: try event.string("name"),
                  distance: try event.double("dist"), earned: try event.optionalString("earned", none: "no"),
                  silver: try event.optionalString("silver", none: "no"),
                  gold: try event.optionalString("gold", none: "no"), best: try event.optionalDouble("best"),
                  left: try event.double("left"), silverPace: try event.optionalDouble("silver_pace"),
                  goldPace: try event.optionalDouble("gold_pace"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [
            Event.Field("id", badgeID),
            Event.Field("name", badgeName),
            .number("dist", distance, NumberFormat.distanceDecimals),
            .textOrNo("earned", earned),
            .textOrNo("silver", silver),
            .textOrNo("gold", gold),
            .number("best", best, NumberFormat.paceDecimals),
            .number("left", left, NumberFormat.distanceDecimals),
            .number("silver_pace", silverPace, NumberFormat.paceDecimals),
            .number("gold_pace", goldPace, NumberFormat.paceDecimals),
        ])
    }
}
