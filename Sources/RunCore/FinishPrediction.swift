import Foundation

/// Predicted finish times for a runner with a goal distance: the pace so far (leaning on the target pace
/// early, when there is one) carried to the goal with Riegel's fatigue exponent phased in by the share of the
/// goal done, blended toward the current pace as the finish nears.
///
/// Why this blend, and not Riegel's T2 = T1·(D2/D1)^1.06 on the moving time so far: Riegel's formula predicts
/// a race from a whole race at a shorter distance. A minute into a run is not that: its (D2/D1)^0.06 is 20%
/// at 5% of the goal, so a runner who held a steady pace to a 27:47 5 km was told 33:07 at 1:15. Here:
/// - the base pace is the moving pace so far; with a target pace it is the two weighted by distance, the target
///   counting as ``targetShare`` of the goal already run at it: at 5% of the goal done they weigh the same, at
///   50% the runner's own pace is 91% of it. Early the target is the better guide (the first minute's pace is
///   a standing start and GPS settling); it fades as the runner's own pace says more;
/// - the exponent is 1 + 0.06·d, d the share of the goal done: the fatigue term counts for little early (from a
///   minute's data, fatigue over the hours to come is a guess that swamps the data) and for more as the run
///   shows it. For a steady runner it costs at most (1/d)^(0.06·d) − 1, 2.2% at d = 1/e;
/// - the remaining time is (1 − d²)·that + d²·the current pace's: near the finish the pace being run now is
///   the better guide (81% of the weight at 90% done). Squared, not d as it was: the current pace is a 30 s
///   window's, which strays ~25% at a corner under 4–5 m of GPS noise, and at d = 0.5 it moved the prediction
///   by half that on the remaining half; d² halves it mid-run.
public enum FinishPrediction {
    /// Riegel's fatigue exponent, reached in full at the goal (see the type's notes).
    public static let riegelExponent = 1.06
    /// No prediction before this much distance (metres) and moving time (seconds): too little to go on.
    public static let minimumDistance = 200.0
    public static let minimumMovingTime = 60.0
    /// The target pace weighs as much as this share of the goal run at it. Default 0.05.
    public static let targetShare = 0.05

    /// Predicted total time (seconds from the start, stops included) to cover `goal` metres, or nil when the run
    /// is too short to predict from or the goal is already reached. `currentPace` is s/km (nil when standing);
    /// `targetPace` (s/km) is the goal's target time over its distance, nil without one.
    public static func totalTime(toCover goal: Double, distance: Double, elapsed: Double, moving: Double,
                                 currentPace: Double?, targetPace: Double? = nil) -> Double? {
        guard goal > distance, distance >= minimumDistance, moving >= minimumMovingTime else { return nil }
        let done = distance / goal
        // The moving time the distance so far would have taken at the base pace.
        var base = moving
        if let targetPace, targetPace > 0 {
            let prior = targetShare * goal
            base = distance * (moving + prior * targetPace / 1000) / (distance + prior)
        }
        let exponent = 1 + (riegelExponent - 1) * done
        let steadyRemaining = base * pow(goal / distance, exponent) - base
        guard let currentPace, currentPace > 0 else { return elapsed + steadyRemaining }
        let currentRemaining = (goal - distance) * currentPace / 1000
        let weight = done * done
        return elapsed + (1 - weight) * steadyRemaining + weight * currentRemaining
    }
}
