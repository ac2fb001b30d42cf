/// What a `pace:` line predicts for a runner with a goal (`eta=`, `finish=`, `next_eta=`); each is nil (`-`)
/// until there is enough of the run to predict from, or once the goal is reached.
public struct PaceForecast: Sendable, Hashable {
    /// Predicted unix time at which the goal distance is reached.
    public var eta: Double?
    /// Predicted total time for the goal distance, seconds from the run's start.
    public var finish: Double?
    /// Predicted unix time at which the next badge is reached.
    public var nextETA: Double?

    /// Creates a forecast.
    public init(eta: Double?, finish: Double?, nextETA: Double?) {
        self.eta = eta
        self.finish = finish
        self.nextETA = nextETA
    }
}

/// `alert:NAME kind=K dist=M time=S pace=P [target=P off=PCT] [lat=DEG lon=DEG ts=TS] [batt=PCT]`: for coaches, a
/// checkpoint passed (`coach:NAME every=M`), or the current pace off the goal's target pace for a while
/// (`off_pace`) and back within its margin (`back_on_pace`); for everyone who follows the runner, what the
/// runner's phone says: an SOS (`sos`, with where and when), its battery level (`battery`) and a low battery
/// (`battery_low`).
public struct AlertEvent: WireEvent {
    /// `alert`.
    public static let kind = "alert"
    /// The alert kinds.
    public static let kinds = ["checkpoint", "off_pace", "back_on_pace", "sos", "battery", "battery_low", "off_course",
                               "back_on_course"]
    /// The kinds a phone raises (to everyone who may follow the runner, not to coaches only).
    public static let deviceKinds: Set<String> = ["sos", "battery", "battery_low"]
    /// The runner.
    public var runner: String
    /// `checkpoint`, `off_pace`, `back_on_pace`, `sos`, `battery` or `battery_low`.
    public var alert: String
    /// Metres: the checkpoint's distance, or the distance when the alert was raised (0 before a run starts).
    public var distance: Double
    /// Elapsed seconds at that distance.
    public var elapsed: Double
    /// s/km: over the stretch since the previous checkpoint, or the current pace for pace alerts; nil (`-`) for
    /// the phone's alerts.
    public var pace: Double?
    /// The goal's target pace, s/km (pace alerts only).
    public var target: Double?
    /// How far `pace` is off `target`, in percent (positive: slower), pace alerts only; for `off_course`, the
    /// metres off the course.
    public var off: Double?
    /// Where the runner was at the SOS (`sos` only); nil (`-`) when withheld by the runner's privacy zone.
    public var latitude: Double?
    /// See ``latitude``.
    public var longitude: Double?
    /// The SOS position's timestamp exactly as the phone's position carried it (`sos` only).
    public var timestamp: String?
    /// The phone's battery level in percent, when it reported one (`batt=`; absent otherwise).
    public var battery: Double?

    /// Creates the event.
    public init(runner: String, alert: String, distance: Double, elapsed: Double, pace: Double?,
                target: Double? = nil, off: Double? = nil, latitude: Double? = nil, longitude: Double? = nil,
                timestamp: String? = nil, battery: Double? = nil) {
        self.runner = runner
        self.alert = alert
        self.distance = distance
        self.elapsed = elapsed
        self.pace = pace
        self.target = target
        self.off = off
        self.latitude = latitude
        self.longitude = longitude
        self.timestamp = timestamp
        self.battery = battery
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        let alert = try event.oneOf("kind", Self.kinds)
        let isPaceAlert = alert == "off_pace" || alert == "back_on_pace"
        let isSOS = alert == "sos"
        var battery: Double?
        if event["batt"] != nil { battery = try event.double("batt") }
        self.init(runner: event.subject, alert: alert, distance: try event.double("dist"),
                  elapsed: try event.double("time"), pace: try event.optionalDouble("pace"),
                  target: isPaceAlert ? try event.double("target") : nil,
                  off: isPaceAlert || alert == "off_course" ? try event.double("off") : nil,
                  latitude: isSOS ? try event.optionalDouble("lat") : nil,
                  longitude: isSOS ? try event.optionalDouble("lon") : nil,
                  timestamp: isSOS ? try event.string("ts") : nil, battery: battery)
    }

    /// The generic form.
    public var event: Event {
        var fields: [Event.Field] = [
            Event.Field("kind", alert),
            .number("dist", distance, NumberFormat.distanceDecimals),
            .number("time", elapsed, NumberFormat.timeDecimals),
            .number("pace", pace, NumberFormat.paceDecimals),
        ]
        if let target, let off {
            fields.append(.number("target", target, NumberFormat.paceDecimals))
            fields.append(.number("off", off, NumberFormat.paceDecimals))
        } else if let off {
            fields.append(.number("off", off, 0))  // off the course: whole metres
        }
        if let timestamp {
            fields.append(.number("lat", latitude, NumberFormat.coordinateDecimals))
            fields.append(.number("lon", longitude, NumberFormat.coordinateDecimals))
            fields.append(Event.Field("ts", timestamp))
        }
        if let battery { fields.append(.number("batt", battery, 0)) }
        return Event(kind: Self.kind, subject: runner, fields: fields)
    }
}

/// One place on the leaderboard, as `leader:` (an answer line of `leaders:`) and `rank:` (a change, to `watch:*`)
/// carry it.
public struct Standing: Sendable, Hashable {
    /// 1 for the leader.
    public var position: Int
    /// Metres run.
    public var distance: Double
    /// Seconds since the run started.
    public var elapsed: Double
    /// Metres behind the leader (0 for the leader).
    public var gap: Double
    /// Seconds behind the leader at the leader's average pace; nil (`-`) before the leader has a pace.
    public var gapTime: Double?

    /// Creates a standing.
    public init(position: Int, distance: Double, elapsed: Double, gap: Double, gapTime: Double?) {
        self.position = position
        self.distance = distance
        self.elapsed = elapsed
        self.gap = gap
        self.gapTime = gapTime
    }

    init(event: Event) throws(WireError) {
        self.init(position: try event.int("pos"), distance: try event.double("dist"), elapsed: try event.double("time"),
                  gap: try event.double("gap"), gapTime: try event.optionalDouble("gap_time"))
    }

    var fields: [Event.Field] {
        [
            .integer("pos", position),
            .number("dist", distance, NumberFormat.distanceDecimals),
            .number("time", elapsed, NumberFormat.timeDecimals),
            .number("gap", gap, NumberFormat.distanceDecimals),
            .number("gap_time", gapTime, NumberFormat.timeDecimals),
        ]
    }
}

/// `leader:NAME pos=N dist=M time=S gap=M gap_time=S`: one live runner of a `leaders:` answer.
public struct LeaderEvent: WireEvent {
    /// `leader`.
    public static let kind = "leader"
    /// The runner.
    public var runner: String
    /// Where the runner stands.
    public var standing: Standing

    /// Creates the event.
    public init(runner: String, standing: Standing) {
        self.runner = runner
        self.standing = standing
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, standing: try Standing(event: event))
    }

    /// The generic form.
    public var event: Event { Event(kind: Self.kind, subject: runner, fields: standing.fields) }
}

/// `rank:NAME pos=N was=N|- dist=M time=S gap=M gap_time=S`: a live runner's place changed (`was=-` when the
/// run has just joined the board).
public struct RankEvent: WireEvent {
    /// `rank`.
    public static let kind = "rank"
    /// The runner.
    public var runner: String
    /// The place before the change; nil for a run that has just started.
    public var previous: Int?
    /// Where the runner stands now.
    public var standing: Standing

    /// Creates the event.
    public init(runner: String, previous: Int?, standing: Standing) {
        self.runner = runner
        self.previous = previous
        self.standing = standing
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        let was = try event.optionalString("was")
        var previous: Int?
        if let was {
            guard let value = Int(was) else { throw WireError(.badNumber, "rank: was= is not a whole number or -") }
            previous = value
        }
        self.init(runner: event.subject, previous: previous, standing: try Standing(event: event))
    }

    /// The generic form.
    public var event: Event {
        var fields = standing.fields
        fields.insert(Event.Field(key: "was", value: previous.map(String.init) ?? "-", shape: .number), at: 1)
        return Event(kind: Self.kind, subject: runner, fields: fields)
    }
}
