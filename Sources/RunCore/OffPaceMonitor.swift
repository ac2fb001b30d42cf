/// Watches a runner's current pace against a target pace, with the same hysteresis both ways: off pace once
/// the pace has stayed more than a margin off for a hold time, back on pace once it has stayed within the
/// margin for the same hold time.
///
/// Why symmetric: a runner steadily 11% slow whose current pace dips inside the margin for a second is still
/// off pace; saying `backOnPace` at once (and `offPace` a minute later) told the coach three things where
/// nothing changed. So a stretch against the state must last `hold` seconds, and any sample agreeing with the
/// state ends it: no single sample flips an alert.
///
/// The stretch's time is the run's time between consecutive samples that both disagree with the state. A
/// sample without a pace (standing, or too early to tell) neither ends a stretch nor counts toward it: the
/// intervals on either side of it are left out, so a stop does not stand in for time spent off (or on) pace.
/// Times are the run's own (fix timestamps), so a run sent late or replayed fast is judged as it was run.
public struct OffPaceMonitor: Sendable {
    /// What changed with one observation.
    public enum Change: Sendable, Equatable {
        /// The pace has been off for the hold time.
        case offPace
        /// It has been within the margin for the hold time after an `offPace`.
        case backOnPace
    }

    /// Target pace, s/km.
    public let targetPace: Double
    /// Allowed deviation as a fraction (0.05 for 5%).
    public let margin: Double
    /// Seconds the pace must stay off before `offPace`, and within the margin before `backOnPace`. Default 60.
    public let hold: Double
    /// True between an `offPace` and the next `backOnPace`.
    public private(set) var isOffPace = false
    /// Seconds counted so far of the current stretch disagreeing with `isOffPace` (0 when there is none).
    public private(set) var contraryTime = 0.0
    /// Time of the previous sample when it had a pace that disagreed with `isOffPace`; nil otherwise (after a
    /// sample without a pace, the next interval is not counted).
    private var lastContrary: Double?

    /// Creates a monitor.
    public init(targetPace: Double, margin: Double, hold: Double = 60) {
        self.targetPace = targetPace
        self.margin = margin
        self.hold = hold
    }

    /// How far `pace` is off the target, as a fraction (positive: slower).
    public func deviation(of pace: Double) -> Double { (pace - targetPace) / targetPace }

    /// One current pace at run time `time`; the alert to send, if any.
    public mutating func observe(currentPace: Double?, at time: Double) -> Change? {
        guard let currentPace, currentPace > 0 else {
            lastContrary = nil
            return nil
        }
        let off = abs(deviation(of: currentPace)) > margin
        guard off != isOffPace else {
            // Agrees with the state: any stretch against it is over.
            contraryTime = 0
            lastContrary = nil
            return nil
        }
        if let lastContrary, time > lastContrary { contraryTime += time - lastContrary }
        lastContrary = time
        guard contraryTime >= hold else { return nil }
        isOffPace = off
        contraryTime = 0
        lastContrary = nil
        return off ? .offPace : .backOnPace
    }
}
