import RunCore
import Wire

/// Where one live runner is on its course, as the loop knows it: copied on the loop for a JSON answer or a
/// leaderboard (plain values, unix times).
package struct CourseProgressView: Sendable {
    /// One course point, passed or ahead.
    package struct Point: Sendable {
        /// Its name.
        package var name: String
        /// Metres along the course.
        package var along: Double
        /// When the runner passed it (unix), nil while ahead.
        package var passed: Double?
        /// When the runner should reach it (unix), nil when passed or while the pace model has too little.
        package var eta: Double?

        package init(name: String, along: Double, passed: Double? = nil, eta: Double? = nil) {
            self.name = name
            self.along = along
            self.passed = passed
            self.eta = eta
        }
    }

    /// The runner.
    package var runner: String
    /// The course's name.
    package var course: String
    /// Metres along the course, and to go.
    package var along: Double, togo: Double
    /// The predicted finish (unix), nil while the pace model has too little to go on.
    package var eta: Double?
    /// Seconds since the run's start (at the latest fix).
    package var elapsed: Double
    /// The average moving pace along the course, seconds per metre; nil before any moving.
    package var secondsPerMetre: Double?
    /// Every point of the course, in order (empty for a run on another node whose course this loop has not read).
    package var points: [Point]
    /// The next point ahead and when the runner should reach it (unix): nil past the last point.
    package var nextPoint: String?
    package var nextPointETA: Double?
    /// True while the runner is off the course.
    package var isOffCourse: Bool
    /// When the runner reached the finish, seconds after the start; nil before.
    var finished: Double?

    /// Runners on one course in order: furthest along first; at the same place (the finish, most often) the
    /// one there first (its finish time, else its elapsed time), as `leaders:` breaks ties; then by name.
    static func isAhead(_ a: CourseProgressView, of b: CourseProgressView) -> Bool {
        if a.along != b.along { return a.along > b.along }
        let (timeA, timeB) = (a.finished ?? a.elapsed, b.finished ?? b.elapsed)
        return timeA != timeB ? timeA < timeB : a.runner < b.runner
    }
}

extension Hub {
    /// Where `name` is on its course, nil for a runner with no live run on one (here, or on another loop or
    /// node, from its newest pace).
    package func courseProgress(of name: String) -> CourseProgressView? {
        guard let run = runners[name]?.run, case .running(_, let started) = run.phase, let matcher = run.course
        else { return remoteCourseProgress(of: name) }
        let update = run.lastCourseUpdate
        var etas: [Int: Double] = [:]
        for upcoming in update?.upcoming ?? [] { if let eta = upcoming.eta { etas[upcoming.point.index] = started + eta } }
        var passed: [Int: Double] = [:]
        for passage in matcher.passages { passed[passage.point.index] = started + passage.time }
        return CourseProgressView(
            runner: name, course: matcher.course.name, along: matcher.along, togo: matcher.togo,
            eta: update?.eta.map { started + $0 }, elapsed: update?.elapsed ?? 0,
            secondsPerMetre: matcher.along > 0 && matcher.movingTime > 0 ? matcher.movingTime / matcher.along : nil,
            points: matcher.course.points.map { point in
                CourseProgressView.Point(name: point.name, along: point.along, passed: passed[point.index],
                                         eta: passed[point.index] == nil ? etas[point.index] : nil)
            },
            nextPoint: run.courseFields?.nextPoint, nextPointETA: run.courseFields?.nextPointETA,
            isOffCourse: matcher.isOffCourse, finished: matcher.finishTime)
    }

    /// Every public runner with a live run on course `course`, on any loop or node, furthest along first.
    package func runners(onCourse course: String) -> [CourseProgressView] {
        let names = Set(runners.keys).union(remoteRuns.compactMap { $0.value.course == course ? $0.key : nil })
        return names.compactMap { name in
            isPrivate(name) ? nil : courseProgress(of: name).flatMap { $0.course == course ? $0 : nil }
        }.sorted(by: CourseProgressView.isAhead)
    }

    /// A run on another loop or node: what its newest pace says (where along, every point ahead's ETA) and its
    /// relayed `point:` lines (the points passed and when).
    private func remoteCourseProgress(of name: String) -> CourseProgressView? {
        guard let remote = remoteRuns[name], let course = remote.course, let line = remote.latestPaceLine,
              let pace = try? PaceEvent(line: String(decoding: line.dropLast(), as: UTF8.self)), let fields = pace.course
        else { return nil }
        let passed = remote.pointLines.compactMap { line in
            try? PointEvent(line: String(decoding: line.last == UInt8(ascii: "\n") ? line.dropLast() : line[...], as: UTF8.self))
        }
        let coursePoints = courses[course]?.points ?? []
        // The points ahead are those after the passed ones (a name alone is ambiguous: an out-and-back's aid
        // station is passed twice); `point_etas` lists them in order from the next one.
        let firstAhead = min(passed.count, coursePoints.count)
        let points = coursePoints.enumerated().map { index, point in
            let ahead = index - firstAhead
            return CourseProgressView.Point(
                name: point.name, along: point.along, passed: index < passed.count ? passed[index].timestamp : nil,
                eta: ahead >= 0 && ahead < fields.pointETAs.count ? fields.pointETAs[ahead] : nil)
        }
        return CourseProgressView(runner: name, course: course, along: fields.along, togo: fields.togo,
                                  eta: pace.forecast?.eta, elapsed: pace.elapsed,
                                  secondsPerMetre: pace.pace.map { $0 / 1000 }, points: points,
                                  nextPoint: fields.nextPoint, nextPointETA: fields.nextPointETA,
                                  isOffCourse: remote.isOffCourse, finished: fields.togo == 0 ? pace.forecast?.finish : nil)
    }
}
