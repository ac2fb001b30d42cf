/// How a ``CourseMatcher`` follows a runner along a ``Course``: the defaults suit a phone's GPS (3–5 m of
/// error, at 1 Hz or sparser) on a road or trail race.
public struct CourseConfiguration: Sendable, Hashable {
    /// A runner farther than this (metres) from the course is off it, once that has lasted
    /// ``offCourseDuration``. Also the farthest a fix may be from the course and still move the runner along
    /// it. Default 50: ten times a phone's error, so noise never reaches it, and half a block.
    public var offCourseDistance = 50.0
    /// Seconds beyond ``offCourseDistance`` before `off_course`. Default 30: a runner cutting a wide corner or
    /// crossing to a fountain is back in less. Farther off, less: `offCourseDuration × offCourseDistance / off`,
    /// never below half of it (15 s at twice the distance), so a runner heading away is told sooner.
    public var offCourseDuration = 30.0
    /// Seconds back within ``offCourseDistance`` before `back_on_course`. Default 10: shorter than the way off,
    /// because a runner back on the course is what the spectators wait to hear, and noise on the course is
    /// tenfold below the distance.
    public var backOnCourseDuration = 10.0
    /// Metres a match may fall behind the last one: GPS noise along the course, never a jump back across an
    /// out-and-back, a loop or a crossing (those are farther behind). Default 10.
    public var backTolerance = 10.0
    /// Metres searched ahead of the last match at any time. Default 100.
    public var windowAhead = 100.0
    /// Speed (m/s) the search window grows by per second since the last match, so a runner found again after
    /// a missing stretch or a detour is searched for as far as they can have gone. Default 7 (a 2:24/km sprint).
    public var topSpeed = 7.0
    /// The window never reaches farther than this (metres) ahead: it bounds the work per fix after a long
    /// silence. Default 5000.
    public var maximumWindow = 5000.0
    /// Metres searched from the start until the first match: the runner is expected at the start. Default 1000.
    public var startWindow = 1000.0
    /// The spread (metres) of a fix's distance from the course when on it: GPS error, the road's width, the
    /// route's drawing. Scores candidates: a candidate that much farther weighs as one ``minimumAlongSpread``
    /// farther from where the runner is expected. Default 10.
    public var distanceSpread = 10.0
    /// The spread (metres) of where along the course a runner is expected one moment after a match. Default 10.
    public var minimumAlongSpread = 10.0
    /// How fast (m/s) the expected position's spread grows with time since the last match: how far a runner's
    /// speed can stray from the last estimate. Default 1.5.
    public var alongSpreadGrowth = 1.5
    /// The spread (m/s) of the runner's motion over ``motionWindow`` against a segment's direction: running
    /// the wrong way along a segment at 3 m/s weighs as much as being 20 m off it. Default 1.5 (1 Hz fixes with
    /// 4 m of correlated error move ~0.7 m/s about the truth over 3 s).
    public var motionSpread = 1.5
    /// Seconds of fixes the runner's motion is taken over. Default 3: long enough to average the error, short
    /// enough to follow the runner round a turn (5 s lagged ~20 m behind at an out-and-back's turn).
    public var motionWindow = 3.0
    /// Metres of GPS error along the course for the along filter (its measurement noise). Default 5.
    public var alongNoise = 5.0
    /// The along filter's acceleration noise, m²/s³: how fast a runner's speed changes. Default 0.01.
    public var accelerationNoise = 0.01
    /// A match this far (metres) from the filtered position restarts the filter there (a shortcut, a lost
    /// stretch). Default 40.
    public var restartDistance = 40.0
    /// A fix matched this close (metres) to the end finishes the run: 3σ of a phone's error along the course,
    /// which can hold fixes short of the end for many seconds. Default 15.
    public var finishDistance = 15.0
    /// Slower than this (m/s) along the course is standing: not moving time. Default 0.5.
    public var movingSpeed = 0.5
    /// Seconds of the recent pace (the pace model's other half). Default 120.
    public var recentPaceWindow = 120.0

    /// The defaults.
    public init() {}
}
