import Foundation

/// Predicted finish times for a runner with a goal distance: Riegel's formula T2 = T1·(D2/D1)^1.06 on the
/// moving time so far, blended toward the current pace as the finish nears.
///
/// Why the blend: early in a run Riegel's endurance curve is the better guide (a fresh runner's current pace
/// flatters); near the finish the pace being run now is. The remaining time is weighted by the share of the
/// goal done: at 10% done it is 90% Riegel, at 90% done 90% current pace.
public enum FinishPrediction {
    /// Riegel's fatigue exponent.
    public static let riegelExponent = 1.06
    /// No prediction before this much distance (metres) and moving time (seconds): too little to go on.
    public static let minimumDistance = 200.0
    public static let minimumMovingTime = 60.0

    /// Predicted total time (seconds from the start, stops included) to cover `goal` metres, or nil when the run
    /// is too short to predict from or the goal is already reached. `currentPace` is s/km (nil when standing).
    public static func totalTime(toCover goal: Double, distance: Double, elapsed: Double, moving: Double,
                                 currentPace: Double?) -> Double? {
        guard goal > distance, distance >= minimumDistance, moving >= minimumMovingTime else { return nil }
        let riegelRemaining = moving * pow(goal / distance, riegelExponent) - moving
        guard let currentPace, currentPace > 0 else { return elapsed + riegelRemaining }
        let done = distance / goal
        let currentRemaining = (goal - distance) * currentPace / 1000
        return elapsed + (1 - done) * riegelRemaining + done * currentRemaining
    }
}

/// Watches a runner's current pace against a target pace: off pace once it has stayed more than a margin off
/// for a hold time, back on pace as soon as it is within the margin again.
///
/// Times are the run's own (fix timestamps), so a run sent late or replayed fast is judged as it was run.
public struct OffPaceMonitor: Sendable {
    /// What changed with one observation.
    public enum Change: Sendable, Equatable {
        /// The pace has been off for the hold time.
        case offPace
        /// It is within the margin again after an `offPace`.
        case backOnPace
    }

    /// Target pace, s/km.
    public let targetPace: Double
    /// Allowed deviation as a fraction (0.05 for 5%).
    public let margin: Double
    /// Seconds the pace must stay off before `offPace`.
    public let hold: Double
    /// When the current stretch off pace began; nil while on pace.
    public private(set) var offSince: Double?
    /// True between an `offPace` and the next `backOnPace`.
    public private(set) var isOffPace = false

    /// Creates a monitor.
    public init(targetPace: Double, margin: Double, hold: Double = 60) {
        self.targetPace = targetPace
        self.margin = margin
        self.hold = hold
    }

    /// How far `pace` is off the target, as a fraction (positive: slower).
    public func deviation(of pace: Double) -> Double { (pace - targetPace) / targetPace }

    /// One current pace at run time `time`. A missing pace (standing, or too early to tell) changes nothing.
    public mutating func observe(currentPace: Double?, at time: Double) -> Change? {
        guard let currentPace, currentPace > 0 else { return nil }
        if abs(deviation(of: currentPace)) <= margin {
            offSince = nil
            guard isOffPace else { return nil }
            isOffPace = false
            return .backOnPace
        }
        let since = offSince ?? time
        offSince = since
        guard !isOffPace, time - since >= hold else { return nil }
        isOffPace = true
        return .offPace
    }
}
