/// Something to tell about a runner on a course, once.
public enum CourseEvent: Sendable, Hashable {
    /// The runner passed a course point.
    case passed(CoursePassage)
    /// The runner has been off the course for the off duration; `distance` metres off now.
    case offCourse(distance: Double)
    /// Back on the course after an `offCourse`.
    case backOnCourse
    /// The runner reached the finish, `time` seconds after the start.
    case finished(time: Double)
}

/// A course point passed, and when: `time` seconds after the start, interpolated between the fixes either side.
public struct CoursePassage: Sendable, Hashable {
    /// The point.
    public var point: CoursePoint
    /// Seconds after the start.
    public var time: Double
}

/// A course point ahead and when the runner should reach it.
public struct CoursePointETA: Sendable, Hashable {
    /// The point.
    public var point: CoursePoint
    /// Seconds after the start the runner should reach it; nil while the pace model has too little to go on.
    public var eta: Double?
}

/// Where a runner is on the course after one fix, with what to announce: plain values, so the server only
/// formats them.
public struct CourseUpdate: Sendable, Hashable {
    /// Seconds since the start (the first fix unless the matcher was given one).
    public var elapsed: Double
    /// Metres along the course (filtered; never more than ``CourseConfiguration/backTolerance`` below the
    /// furthest reached).
    public var along: Double
    /// Metres to the finish along the course.
    public var togo: Double
    /// This fix's distance from the course near the runner (the search window), metres; nil before the runner
    /// has been on the course.
    public var distanceFromCourse: Double?
    /// While the runner is off the course (after `offCourse`, until `backOnCourse`): metres off now.
    public var offCourse: Double?
    /// Predicted finish, seconds after the start (once finished, the finish itself); nil while the pace model
    /// has too little to go on.
    public var eta: Double?
    /// The course points still ahead, in order (the course's own storage: nothing is copied per fix).
    public var ahead: ArraySlice<CoursePoint>
    /// The pace model's seconds per metre from here, nil while it has too little to go on.
    public var secondsPerMetre: Double?
    /// What happened with this fix, in order.
    public var events: [CourseEvent]

    /// The ETA of a point ahead: seconds after the start, nil while the pace model has too little to go on.
    public func eta(of point: CoursePoint) -> Double? {
        secondsPerMetre.map { elapsed + max(0, point.along - along) * $0 }
    }

    /// The course points still ahead, in order, with their ETAs (made when asked: a pace needs only the next).
    public var upcoming: [CoursePointETA] { ahead.map { CoursePointETA(point: $0, eta: eta(of: $0)) } }

    /// The next course point and its ETA, nil when all are passed.
    public var next: CoursePointETA? { ahead.first.map { CoursePointETA(point: $0, eta: eta(of: $0)) } }
}
