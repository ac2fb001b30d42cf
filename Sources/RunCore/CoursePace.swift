/// The pace model behind a course's ETAs: the runner's average moving pace so far (leaning on the goal's
/// target pace early, when there is one), blended toward the recent pace as the finish nears. Every point
/// ahead, the finish included, is reached at that pace: ETA = elapsed + metres to it × pace.
///
/// It mirrors ``FinishPrediction`` but for its fatigue term:
/// - the base pace is the moving time over the distance along the course; with a target pace, the target
///   counts as ``FinishPrediction/targetShare`` of the course already run at it (early the target is the better
///   guide, it fades as the runner's own pace says more);
/// - the pace used is (1 − d²)·base + d²·recent, d the share of the course done, the recent pace over
///   ``CourseConfiguration/recentPaceWindow`` (stops included: a runner walking now will walk on);
/// - no Riegel exponent: a course's ETAs schedule every point ahead, and for a steady runner the exponent
///   costs up to 2.2% (at d = 1/e), more than the 2% a point's ETA may stray; the distance along the course
///   is already a race's distance (no GPS-inflated total to correct).
public enum CoursePace {
    /// Seconds per metre for the rest of the course, or nil with too little to go on (less than
    /// ``FinishPrediction/minimumDistance`` and ``FinishPrediction/minimumMovingTime``, and no target).
    /// `recentPace` and `targetPace` are seconds per metre (nil when unknown or without a goal).
    public static func secondsPerMetre(along: Double, length: Double, moving: Double, recentPace: Double?,
                                       targetPace: Double? = nil) -> Double? {
        let target = targetPace.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        guard along >= FinishPrediction.minimumDistance, moving >= FinishPrediction.minimumMovingTime else {
            return target
        }
        var base = moving / along
        if let target {
            let prior = FinishPrediction.targetShare * length
            base = (moving + prior * target) / (along + prior)
        }
        guard let recentPace, recentPace > 0, recentPace.isFinite else { return base }
        let done = min(along / length, 1), weight = done * done
        return (1 - weight) * base + weight * recentPace
    }
}
