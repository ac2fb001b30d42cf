/// Follows one runner along a ``Course``, fix by fix: how far along, how far to go, when they will reach each
/// point and the finish, which points they passed, and whether they are off the course.
///
/// Matching is monotonic and windowed (see ``candidate(east:north:at:)``): each fix is placed in a window from
/// a little behind the last match to as far as the runner can have gone since, scored by distance from the fix
/// and from where the runner is expected. A fix farther than ``CourseConfiguration/offCourseDistance`` from the
/// whole window moves nothing (the runner is off the course or the fix is wild); the window keeps growing, so
/// the runner is found again after a detour or a missing stretch. The matched positions go through a
/// constant-speed filter (``AlongFilter``), so `along` moves at the runner's pace, not the GPS error's.
///
/// Times are the fixes' own (seconds, any epoch); a fix not later than the previous one is ignored.
public struct CourseMatcher: Sendable {
    /// The course followed.
    public let course: Course
    /// The tuning.
    public let configuration: CourseConfiguration
    /// The goal's target pace, seconds per metre, nil without one.
    public let targetPace: Double?
    /// Time of the start; the first fix's when not given.
    public private(set) var start: Double?
    /// Metres along the course now.
    public private(set) var along = 0.0
    /// The most metres along the course reached.
    public private(set) var furthest = 0.0
    /// Seconds spent moving along the course (slower than ``CourseConfiguration/movingSpeed`` is standing).
    public private(set) var movingTime = 0.0
    /// The points passed so far, in order.
    public private(set) var passages: [CoursePassage] = []
    /// When the runner finished, seconds after the start; nil before.
    public private(set) var finishTime: Double?
    /// How many segments the last fix's search looked at: the cost of a fix (tests show it does not grow with
    /// the course's length).
    public internal(set) var segmentsExamined = 0

    /// The last fix placed on the course.
    struct Match: Sendable, Hashable {
        /// Metres along the course (unfiltered).
        var along: Double
        /// Its segment.
        var segment: Int
        /// The fix's time.
        var time: Double
    }

    /// The last match, nil before the first.
    var lastMatch: Match?
    /// The furthest match: the window never starts more than ``CourseConfiguration/backTolerance`` behind it,
    /// so a run of matches each a little behind cannot walk the runner back.
    var furthestMatch = 0.0
    /// The fixes of the last ``CourseConfiguration/motionWindow`` seconds in the flat frame, oldest first.
    var recentFixes: [FlatFix] = []
    /// The along filter, from the first match.
    var filter: AlongFilter?
    /// Off-course hysteresis.
    private var monitor = OffCourseMonitor()
    /// Time of the last fix taken.
    private var lastTime: Double?
    /// (time, along) about every ``recentSpacing`` seconds over the recent pace window, oldest first.
    private var recent: [RecentSample] = []
    /// Seconds between kept recent samples.
    private static let recentSpacing = 10.0

    /// A fix in the course's flat frame.
    struct FlatFix: Sendable, Hashable {
        /// The fix's time.
        var time: Double
        /// Metres east of the course's first vertex.
        var east: Double
        /// Metres north of it.
        var north: Double
    }

    /// One recent position for the recent pace.
    private struct RecentSample: Sendable, Hashable {
        /// The fix's time.
        var time: Double
        /// Metres along the course then (filtered).
        var along: Double
    }

    /// A matcher for one runner. `targetTime` is the goal's time for the whole course (seconds), if any;
    /// `start` the start time (the first fix's when nil).
    public init(course: Course, configuration: CourseConfiguration = CourseConfiguration(), targetTime: Double? = nil,
                start: Double? = nil) {
        self.course = course
        self.configuration = configuration
        self.targetPace = targetTime.flatMap { $0 > 0 && $0.isFinite ? $0 / course.length : nil }
        self.start = start
    }

    /// Metres to the finish.
    public var togo: Double { max(0, course.length - along) }
    /// True between `offCourse` and `backOnCourse`.
    public var isOffCourse: Bool { monitor.isOffCourse }

    /// Takes one fix.
    public mutating func update(with fix: Fix) -> CourseUpdate {
        update(at: fix.coordinate, time: fix.timestamp)
    }

    /// Takes one position at `time` (seconds).
    public mutating func update(at coordinate: Coordinate, time: Double) -> CourseUpdate {
        let start = self.start ?? time
        self.start = start
        guard Course.isValid(coordinate), time.isFinite, lastTime.map({ time > $0 }) ?? true else {
            return report(at: lastTime ?? time, distance: nil, events: [])
        }
        let previousTime = lastTime ?? time, previousAlong = along
        lastTime = time
        let (east, north) = course.projection.project(coordinate)
        var events: [CourseEvent] = []
        let found = candidate(east: east, north: north, at: time)
        recentFixes.append(FlatFix(time: time, east: east, north: north))
        while let first = recentFixes.first, time - first.time > configuration.motionWindow { recentFixes.removeFirst() }
        if let found, found.distance <= configuration.offCourseDistance {
            follow(found, at: time)
            let dt = time - previousTime
            if dt > 0, (along - previousAlong) / dt >= configuration.movingSpeed { movingTime += dt }
            events += passing(from: previousAlong, at: previousTime, to: time, start: start)
            if finishTime == nil, found.along >= course.length - configuration.finishDistance {
                // Within the GPS error of the end: the runner is there (correlated error can hold the fixes a few
                // metres short for many seconds). The finish time is this fix's plus the metres left at the
                // filter's speed, so it is not early by the distance.
                let speed = max(filter?.speed ?? 0, configuration.movingSpeed)
                let finish = time - start + (course.length - found.along) / speed
                finishTime = finish
                along = course.length
                furthest = course.length
                events.append(.finished(time: finish))
            }
        }
        let distance = lastMatch == nil ? nil : found?.nearest
        if let distance, finishTime == nil,
           let change = monitor.observe(distance: distance, at: time, configuration: configuration) {
            events.append(change == .offCourse ? .offCourse(distance: distance) : .backOnCourse)
        }
        return report(at: time, distance: distance, events: events)
    }

    /// Moves the runner to a matched place.
    private mutating func follow(_ found: Candidate, at time: Double) {
        lastMatch = Match(along: found.along, segment: found.segment, time: time)
        furthestMatch = max(furthestMatch, found.along)
        if var filter {
            if abs(found.along - filter.predicted(at: time)) > configuration.restartDistance {
                filter.restart(at: found.along, time: time)
            } else {
                filter.update(found.along, at: time)
            }
            self.filter = filter
        } else {
            filter = AlongFilter(position: found.along, time: time, noise: configuration.alongNoise,
                                 acceleration: configuration.accelerationNoise)
        }
        let filtered = finishTime == nil ? filter?.position ?? found.along : course.length
        along = min(max(filtered, furthest - configuration.backTolerance, 0), course.length)
        furthest = max(furthest, along)
        if let last = recent.last, time - last.time < Self.recentSpacing {
            // Keep the newest position in the last slot, so the window's end is now.
            recent[recent.count - 1] = RecentSample(time: time, along: along)
            if recent.count == 1 || time - recent[recent.count - 2].time < Self.recentSpacing { return }
        }
        recent.append(RecentSample(time: time, along: along))
        while let first = recent.first, time - first.time > configuration.recentPaceWindow + Self.recentSpacing {
            recent.removeFirst()
        }
    }

    /// The points passed as the furthest position grew, timed by interpolating between the two fixes.
    private mutating func passing(from previous: Double, at previousTime: Double, to time: Double,
                                  start: Double) -> [CourseEvent] {
        var events: [CourseEvent] = []
        while passages.count < course.points.count, course.points[passages.count].along <= furthest {
            let point = course.points[passages.count]
            let share = along > previous ? min(max((point.along - previous) / (along - previous), 0), 1) : 1
            let passage = CoursePassage(point: point, time: previousTime + share * (time - previousTime) - start)
            passages.append(passage)
            events.append(.passed(passage))
        }
        return events
    }

    /// The recent pace, seconds per metre, nil over less than half the window or when standing.
    private var recentPace: Double? {
        guard let first = recent.first, let last = recent.last, last.time - first.time >= configuration.recentPaceWindow / 2,
              last.along > first.along else { return nil }
        return (last.time - first.time) / (last.along - first.along)
    }

    /// The update for the state now.
    private func report(at time: Double, distance: Double?, events: [CourseEvent]) -> CourseUpdate {
        let elapsed = time - (start ?? time)
        let pace = finishTime == nil
            ? CoursePace.secondsPerMetre(along: along, length: course.length, moving: movingTime,
                                         recentPace: recentPace, targetPace: targetPace)
            : nil
        return CourseUpdate(elapsed: elapsed, along: along, togo: togo, distanceFromCourse: distance,
                            offCourse: monitor.isOffCourse ? distance : nil,
                            eta: finishTime ?? pace.map { elapsed + togo * $0 },
                            ahead: course.points[passages.count...], secondsPerMetre: pace, events: events)
    }
}
