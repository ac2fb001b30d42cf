/// Why a run ended.
public enum RunEndReason: String, Sendable, Hashable, CaseIterable {
    /// The runner sent `stop:`.
    case stop
    /// The runner sent `stop:discard`.
    case discard
    /// The runner stayed disconnected past the resume window.
    case timeout
    /// The server shut down.
    case shutdown
    /// A phone app's positions stopped for the device idle gap (apps never say a run ended).
    case idle
}

/// `end:NAME run=ID dist=M time=S moving=S pace=S_PER_KM saved=yes|no reason=stop|discard|timeout|shutdown
/// filtered=N [REASON=N …] [gain=M loss=M]` — a run ended; final values come from the fully smoothed track.
/// `gain` and `loss` (metres climbed and descended) only when the run's fixes had altitudes.
public struct RunEndedEvent: WireEvent {
    /// `end`.
    public static let kind = "end"
    /// Filter reasons in the order they are written (RunCore's `FixRejection.rawValue`).
    public static let filterReasons = ["inaccurate", "invalid", "duplicate", "out_of_order", "future", "stale", "jump"]
    /// The runner.
    public var runner: String
    /// The run's id.
    public var runID: Int64
    /// Final distance, metres.
    public var distance: Double
    /// Seconds from first to last accepted fix.
    public var elapsed: Double
    /// Seconds moving.
    public var moving: Double
    /// Average pace in s/km; nil (`-`) without distance.
    public var pace: Double?
    /// Whether the run was kept in history.
    public var saved: Bool
    /// Why it ended.
    public var reason: RunEndReason
    /// Rejected fixes per reason; only non-zero counts are written, one `REASON=N` field each.
    public var filtered: [String: Int]
    /// Metres climbed (`gain=`), nil when the run had no altitudes (the field is then left out).
    public var elevationGain: Double?
    /// Metres descended (`loss=`), nil when the run had no altitudes.
    public var elevationLoss: Double?

    /// Total rejected fixes (`filtered=`).
    public var filteredCount: Int { filtered.values.reduce(0, +) }

    /// Creates the event.
    public init(runner: String, runID: Int64, distance: Double, elapsed: Double, moving: Double, pace: Double?,
                saved: Bool, reason: RunEndReason, filtered: [String: Int] = [:], elevationGain: Double? = nil,
                elevationLoss: Double? = nil) {
        self.elevationGain = elevationGain
        self.elevationLoss = elevationLoss
        self.runner = runner
        self.runID = runID
        self.distance = distance
        self.elapsed = elapsed
        self.moving = moving
        self.pace = pace
        self.saved = saved
        self.reason = reason
        self.filtered = filtered.filter { $0.value != 0 }
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        guard let reason = RunEndReason(rawValue: try event.string("reason")) else {
            throw WireError(.badArgument, "end: unknown reason=")
        }
        _ = try event.int("filtered")
        var filtered: [String: Int] = [:]
        for key in Self.filterReasons where event[key] != nil {
            filtered[key] = try event.int(key)
        }
        self.init(runner: event.subject, runID: try event.int64("run"), distance: try event.double("dist"),
                  elapsed: try event.double("time"), moving: try event.double("moving"),
                  pace: try event.optionalDouble("pace"), saved: try event.bool("saved"), reason: reason,
                  filtered: filtered, elevationGain: try event.absentOrDouble("gain"),
                  elevationLoss: try event.absentOrDouble("loss"))
    }

    /// The generic form.
    public var event: Event {
        var fields: [Event.Field] = [
            .integer("run", runID),
            .number("dist", distance, NumberFormat.distanceDecimals),
            .number("time", elapsed, NumberFormat.timeDecimals),
            .number("moving", moving, NumberFormat.timeDecimals),
            .number("pace", pace, NumberFormat.paceDecimals),
            .yesNo("saved", saved),
            Event.Field("reason", reason.rawValue),
            .integer("filtered", filteredCount),
        ]
        for key in Self.filterReasons {
            if let count = filtered[key], count != 0 { fields.append(.integer(key, count)) }
        }
        for key in filtered.keys.sorted() where !Self.filterReasons.contains(key) && filtered[key] != 0 {
            fields.append(.integer(key, filtered[key] ?? 0))
        }
        if let elevationGain { fields.append(.number("gain", elevationGain, NumberFormat.elevationDecimals)) }
        if let elevationLoss { fields.append(.number("loss", elevationLoss, NumberFormat.elevationDecimals)) }
        return Event(kind: Self.kind, subject: runner, fields: fields)
    }
}
