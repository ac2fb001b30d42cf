/// `run:NAME id=RUNID ts=TS` — a runner's run started (its first accepted fix).
public struct RunStartedEvent: WireEvent {
    /// `run`.
    public static let kind = "run"
    /// The runner.
    public var runner: String
    /// The stored run's id.
    public var runID: Int64
    /// The first fix's timestamp as the runner sent it.
    public var timestamp: String

    /// Creates the event.
    public init(runner: String, runID: Int64, timestamp: String) {
        self.runner = runner
        self.runID = runID
        self.timestamp = timestamp
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, runID: try event.int64("id"), timestamp: try event.string("ts"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [.integer("id", runID), Event.Field("ts", timestamp)])
    }
}

/// `pace:NAME dist=M time=S moving=S pace=S_PER_KM cur=S_PER_KM lat=… lon=… ts=TS next=BADGE left=M`
/// — the live measurements after an accepted fix.
public struct PaceEvent: WireEvent {
    /// `pace`.
    public static let kind = "pace"
    /// The runner.
    public var runner: String
    /// Metres so far (provisional while live).
    public var distance: Double
    /// Seconds since the run started.
    public var elapsed: Double
    /// Seconds moving.
    public var moving: Double
    /// Average pace in s/km over the moving time; nil (`-`) until there is distance.
    public var pace: Double?
    /// Recent pace in s/km; nil (`-`) when standing or too early.
    public var current: Double?
    /// Degrees north of the current position.
    public var latitude: Double
    /// Degrees east of the current position.
    public var longitude: Double
    /// The latest fix's timestamp exactly as the runner sent it.
    public var timestamp: String
    /// Id of the next badge; nil (`-`) past the last one.
    public var nextBadge: String?
    /// Metres left to the next badge (0 when none).
    public var left: Double

    /// Creates the event.
    public init(runner: String, distance: Double, elapsed: Double, moving: Double, pace: Double?, current: Double?,
                latitude: Double, longitude: Double, timestamp: String, nextBadge: String?, left: Double) {
        self.runner = runner
        self.distance = distance
        self.elapsed = elapsed
        self.moving = moving
        self.pace = pace
        self.current = current
        self.latitude = latitude
        self.longitude = longitude
        self.timestamp = timestamp
        self.nextBadge = nextBadge
        self.left = left
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, distance: try event.double("dist"), elapsed: try event.double("time"),
                  moving: try event.double("moving"), pace: try event.optionalDouble("pace"),
                  current: try event.optionalDouble("cur"), latitude: try event.double("lat"),
                  longitude: try event.double("lon"), timestamp: try event.string("ts"),
                  nextBadge: try event.optionalString("next"), left: try event.double("left"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [
            .number("dist", distance, NumberFormat.distanceDecimals),
            .number("time", elapsed, NumberFormat.timeDecimals),
            .number("moving", moving, NumberFormat.timeDecimals),
            .number("pace", pace, NumberFormat.paceDecimals),
            .number("cur", current, NumberFormat.paceDecimals),
            .number("lat", latitude, NumberFormat.coordinateDecimals),
            .number("lon", longitude, NumberFormat.coordinateDecimals),
            Event.Field("ts", timestamp),
            Event.Field("next", nextBadge ?? "-"),
            .number("left", left, NumberFormat.distanceDecimals),
        ])
    }

    /// Appends the line and `\n` without building an `Event` or any String: this runs once per fix per
    /// watcher. Produces exactly the bytes of `event.append(to:)` (a test checks this).
    public func append(to buffer: inout [UInt8]) {
        buffer.reserveCapacity(buffer.count + 160 + runner.utf8.count + timestamp.utf8.count)
        Self.appendASCII("pace:", to: &buffer)
        buffer.append(contentsOf: runner.utf8)
        Self.appendASCII(" dist=", to: &buffer)
        NumberFormat.append(distance, decimals: NumberFormat.distanceDecimals, to: &buffer)
        Self.appendASCII(" time=", to: &buffer)
        NumberFormat.append(elapsed, decimals: NumberFormat.timeDecimals, to: &buffer)
        Self.appendASCII(" moving=", to: &buffer)
        NumberFormat.append(moving, decimals: NumberFormat.timeDecimals, to: &buffer)
        Self.appendASCII(" pace=", to: &buffer)
        NumberFormat.append(pace, decimals: NumberFormat.paceDecimals, orDashTo: &buffer)
        Self.appendASCII(" cur=", to: &buffer)
        NumberFormat.append(current, decimals: NumberFormat.paceDecimals, orDashTo: &buffer)
        Self.appendASCII(" lat=", to: &buffer)
        NumberFormat.append(latitude, decimals: NumberFormat.coordinateDecimals, to: &buffer)
        Self.appendASCII(" lon=", to: &buffer)
        NumberFormat.append(longitude, decimals: NumberFormat.coordinateDecimals, to: &buffer)
        Self.appendASCII(" ts=", to: &buffer)
        EventSyntax.appendValue(timestamp, to: &buffer)
        Self.appendASCII(" next=", to: &buffer)
        if let nextBadge { EventSyntax.appendValue(nextBadge, to: &buffer) } else { buffer.append(UInt8(ascii: "-")) }
        Self.appendASCII(" left=", to: &buffer)
        NumberFormat.append(left, decimals: NumberFormat.distanceDecimals, to: &buffer)
        buffer.append(UInt8(ascii: "\n"))
    }

    @inline(__always) private static func appendASCII(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }
}

/// `badge:NAME id=BADGE name="…" tier=earned|silver|gold|best dist=M time=S speed=M_PER_S lat=… lon=… ts=UNIX`
/// — a badge won during the live run (also listed by `run:ID`).
public struct BadgeEvent: WireEvent {
    /// `badge`.
    public static let kind = "badge"
    /// The tier words, in order of rank.
    public static let tiers = ["earned", "silver", "gold", "best"]
    /// The runner.
    public var runner: String
    /// The badge id, e.g. `mars`.
    public var badgeID: String
    /// The badge's display name, e.g. `Mars`.
    public var badgeName: String
    /// One of `tiers` (RunCore's `BadgeTier.rawValue`).
    public var tier: String
    /// The badge's distance in metres.
    public var distance: Double
    /// Elapsed run time at the crossing, seconds.
    public var elapsed: Double
    /// Checkpoint speed, metres per second.
    public var speed: Double
    /// Degrees north of the crossing.
    public var latitude: Double
    /// Degrees east of the crossing.
    public var longitude: Double
    /// Unix time of the crossing (interpolated, so computed rather than echoed), 3 decimals.
    public var timestamp: Double

    /// Creates the event.
    public init(runner: String, badgeID: String, badgeName: String, tier: String, distance: Double, elapsed: Double,
                speed: Double, latitude: Double, longitude: Double, timestamp: Double) {
        self.runner = runner
        self.badgeID = badgeID
        self.badgeName = badgeName
        self.tier = tier
        self.distance = distance
        self.elapsed = elapsed
        self.speed = speed
        self.latitude = latitude
        self.longitude = longitude
        self.timestamp = timestamp
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, badgeID: try event.string("id"), badgeName: try event.string("name"),
                  tier: try event.oneOf("tier", Self.tiers), distance: try event.double("dist"),
                  elapsed: try event.double("time"), speed: try event.double("speed"),
                  latitude: try event.double("lat"), longitude: try event.double("lon"),
                  timestamp: try event.double("ts"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [
            Event.Field("id", badgeID),
            Event.Field("name", badgeName),
            Event.Field("tier", tier),
            .number("dist", distance, NumberFormat.distanceDecimals),
            .number("time", elapsed, NumberFormat.timeDecimals),
            .number("speed", speed, NumberFormat.speedDecimals),
            .number("lat", latitude, NumberFormat.coordinateDecimals),
            .number("lon", longitude, NumberFormat.coordinateDecimals),
            .number("ts", timestamp, NumberFormat.timestampDecimals),
        ])
    }
}

/// `split:NAME unit=km|mi n=N time=S pace=S_PER_KM at=S` — a full kilometre or mile completed.
public struct SplitEvent: WireEvent {
    /// `split`.
    public static let kind = "split"
    /// The unit words (RunCore's `SplitUnit.rawValue`).
    public static let units = ["km", "mi"]
    /// The runner.
    public var runner: String
    /// `km` or `mi`.
    public var unit: String
    /// 1 for the first full unit, 2 for the second, …
    public var number: Int
    /// Seconds taken for this unit alone.
    public var duration: Double
    /// Pace over this unit, s/km.
    public var pace: Double
    /// Elapsed run time at the split, seconds.
    public var elapsed: Double

    /// Creates the event.
    public init(runner: String, unit: String, number: Int, duration: Double, pace: Double, elapsed: Double) {
        self.runner = runner
        self.unit = unit
        self.number = number
        self.duration = duration
        self.pace = pace
        self.elapsed = elapsed
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, unit: try event.oneOf("unit", Self.units), number: try event.int("n"),
                  duration: try event.double("time"), pace: try event.double("pace"), elapsed: try event.double("at"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [
            Event.Field("unit", unit),
            .integer("n", number),
            .number("time", duration, NumberFormat.timeDecimals),
            .number("pace", pace, NumberFormat.paceDecimals),
            .number("at", elapsed, NumberFormat.timeDecimals),
        ])
    }
}
