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

/// `pace:NAME dist=M time=S moving=S pace=S_PER_KM cur=S_PER_KM lat=… lon=… ts=TS next=BADGE left=M`, with a goal
/// followed by `eta=UNIX finish=S next_eta=UNIX`
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
    /// Degrees north of the current position; nil (`-`) where a privacy zone withholds it.
    public var latitude: Double?
    /// Degrees east of the current position; nil (`-`) where a privacy zone withholds it.
    public var longitude: Double?
    /// The latest fix's timestamp exactly as the runner sent it.
    public var timestamp: String
    /// Id of the next badge; nil (`-`) past the last one.
    public var nextBadge: String?
    /// Metres left to the next badge (0 when none).
    public var left: Double
    /// With a goal (`goal:`) or a course (`course:`): the predicted finish and the next badge's predicted time;
    /// nil without either.
    public var forecast: PaceForecast?
    /// On a course (`course:`): where along it, and the next course point; nil off any course.
    public var course: PaceCourse?

    /// Creates the event.
    public init(runner: String, distance: Double, elapsed: Double, moving: Double, pace: Double?, current: Double?,
                latitude: Double?, longitude: Double?, timestamp: String, nextBadge: String?, left: Double,
                forecast: PaceForecast? = nil) {
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
        self.forecast = forecast
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        var forecast: PaceForecast?
        if event["eta"] != nil {
            forecast = PaceForecast(eta: try event.optionalDouble("eta"), finish: try event.optionalDouble("finish"),
                                    nextETA: try event.optionalDouble("next_eta"))
        }
        self.init(runner: event.subject, distance: try event.double("dist"), elapsed: try event.double("time"),
                  moving: try event.double("moving"), pace: try event.optionalDouble("pace"),
                  current: try event.optionalDouble("cur"), latitude: try event.optionalDouble("lat"),
                  longitude: try event.optionalDouble("lon"), timestamp: try event.string("ts"),
                  nextBadge: try event.optionalString("next"), left: try event.double("left"), forecast: forecast)
        if event["along"] != nil {
            let next = event["next_point"]
            course = PaceCourse(along: try event.double("along"), togo: try event.double("togo"), nextPoint: next,
                                nextPointETA: next == nil ? nil : try event.optionalDouble("next_point_eta"),
                                pointETAs: try event.absentOrDoubles("point_etas"))
        }
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
            .textOrDash("next", nextBadge),
            .number("left", left, NumberFormat.distanceDecimals),
        ] + (forecast.map { forecast in [
            .number("eta", forecast.eta, 0),
            .number("finish", forecast.finish, NumberFormat.timeDecimals),
            .number("next_eta", forecast.nextETA, 0),
        ] } ?? []) + (course.map { course in [
            .number("along", course.along, NumberFormat.distanceDecimals),
            .number("togo", course.togo, NumberFormat.distanceDecimals),
        ] + (course.nextPoint.map { [Event.Field("next_point", $0), .number("next_point_eta", course.nextPointETA, 0)] } ?? [])
          + (course.pointETAs.isEmpty ? [] : [.numbers("point_etas", course.pointETAs, 0)])
        } ?? []))
    }

    /// Appends the line and `\n` without building an `Event` or any String: this runs once per fix.
    /// Everything is written into one stack buffer and appended once. Produces exactly the bytes of
    /// `event.append(to:)` (a test checks this).
    public func append(to buffer: inout [UInt8]) {
        // On a course the next point's name may need quoting: the generic form writes it.
        guard course == nil else { return event.append(to: &buffer) }
        let next = nextBadge ?? "-"
        let capacity = 96 + 10 * NumberFormat.maximumWrittenLength + runner.utf8.count + timestamp.utf8.count
            + next.utf8.count
        // The texts are checked as they are copied (a loop over the copy, not a second pass over each String).
        let written: Bool = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            var writer = ByteWriter(base: scratch.baseAddress!)
            writer.write("pace:")
            guard writer.writeBare(runner) else { return false }
            writer.write(" dist=", distance, NumberFormat.distanceDecimals)
            writer.write(" time=", elapsed, NumberFormat.timeDecimals)
            writer.write(" moving=", moving, NumberFormat.timeDecimals)
            writer.write(" pace=", pace, NumberFormat.paceDecimals)
            writer.write(" cur=", current, NumberFormat.paceDecimals)
            writer.write(" lat=", latitude, NumberFormat.coordinateDecimals)
            writer.write(" lon=", longitude, NumberFormat.coordinateDecimals)
            writer.write(" ts=")
            guard writer.writeBare(timestamp) else { return false }
            writer.write(" next=")
            guard writer.writeBare(next) else { return false }
            writer.write(" left=", left, NumberFormat.distanceDecimals)
            if let forecast {
                writer.write(" eta=", forecast.eta, 0)
                writer.write(" finish=", forecast.finish, NumberFormat.timeDecimals)
                writer.write(" next_eta=", forecast.nextETA, 0)
            }
            writer.write("\n")
            buffer.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: writer.count))
            return true
        }
        if !written { event.append(to: &buffer) }  // odd texts need quoting: not the hot path
    }
}

/// Writes into memory the caller has sized; only for the fixed-shape fast paths.
struct ByteWriter {
    let base: UnsafeMutablePointer<UInt8>
    var count = 0

    @inline(__always) mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { bytes in
            (base + count).update(from: bytes.baseAddress!, count: bytes.count)
            count += bytes.count
        }
    }

    @inline(__always) mutating func write(_ text: String) {
        // Native strings (small ones included) are contiguous UTF-8: one copy instead of the view's byte loop.
        let copied: Int? = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress else { return 0 }
            (base + count).update(from: start, count: bytes.count)
            return bytes.count
        }
        if let copied {
            count += copied
            return
        }
        for byte in text.utf8 {
            base[count] = byte
            count += 1
        }
    }

    /// Writes `text` if it may go unquoted (not empty, every byte bare); false, with the count unchanged, if not.
    @inline(__always) mutating func writeBare(_ text: String) -> Bool {
        let start = count
        write(text)
        guard count > start, EventSyntax.allBare(UnsafeBufferPointer(start: base + start, count: count - start)) else {
            count = start
            return false
        }
        return true
    }

    @inline(__always) mutating func write(_ value: Double, _ decimals: Int) {
        count += NumberFormat.write(value, decimals: decimals, to: base + count)
    }

    @inline(__always) mutating func write(_ value: Double?, _ decimals: Int) {
        if let value {
            write(value, decimals)
        } else {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
    }

    /// A field: its label (` dist=`, `,"dist":`), then its number.
    @inline(__always) mutating func write(_ label: StaticString, _ value: Double, _ decimals: Int) {
        write(label)
        write(value, decimals)
    }

    /// A field of the line: its label (` pace=`), then its number or `-`.
    @inline(__always) mutating func write(_ label: StaticString, _ value: Double?, _ decimals: Int) {
        write(label)
        write(value, decimals)
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
    /// Degrees north of the crossing; nil (`-`) where a privacy zone withholds it.
    public var latitude: Double?
    /// Degrees east of the crossing; nil (`-`) where a privacy zone withholds it.
    public var longitude: Double?
    /// Unix time of the crossing (interpolated, so computed rather than echoed), 3 decimals.
    public var timestamp: Double

    /// Creates the event.
    public init(runner: String, badgeID: String, badgeName: String, tier: String, distance: Double, elapsed: Double,
                speed: Double, latitude: Double?, longitude: Double?, timestamp: Double) {
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
                  latitude: try event.optionalDouble("lat"), longitude: try event.optionalDouble("lon"),
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
