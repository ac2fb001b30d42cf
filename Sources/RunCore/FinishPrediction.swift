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
