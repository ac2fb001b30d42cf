import RunCore
import RunStore
import Wire

/// Courses (`course:NAME`): a runner follows a stored race course; every pace says where along it the runner
/// is, the finish and the next point are predicted from it, passing a point is a `point:` event, and leaving the
/// course for a while an alert to coaches.
extension Hub {
    /// The course a `course:NAME` command needs read from the store first (the server reads it off the loop and
    /// hands it to ``learnedCourse(_:named:)``); nil when the hub can answer now.
    func courseToLookUp(in command: Command) -> String? {
        guard case .course(let name?) = command, courses[name] == nil, !unknownCourses.contains(name),
              configuration.raceCourse?.name != name else { return nil }
        return name
    }

    /// What the store held under a course's name, built (nil: no such course, or one that no longer builds).
    package func learnedCourse(_ course: Course?, named name: String) {
        assertOnLoop()
        if let course {
            courses[name] = course
        } else if unknownCourses.count < 10_000 {
            unknownCourses.insert(name)
        }
    }

    /// `course:NAME` / `course:off`: the runner's course for the live run and the next ones.
    func setCourse(named name: String?, for id: ConnectionID) {
        guard let entry = ownEntry(id, for: "course", asking: "iam:NAME") else { return }
        guard let chosen = follow(course: name, runner: entry.name) else {
            fail(id, .notFound, "no course \(name ?? ""): moonrunner course add FILE --name \(name ?? "") stores one")
            return
        }
        guard let course = chosen else {
            send(OkEvent(what: "course", fields: [Event.Field(key: "cleared", value: "yes", shape: .flag)]), to: id)
            return
        }
        send(OkEvent(what: "course", fields: [
            Event.Field("name", course.name),
            .number("dist", course.length, NumberFormat.distanceDecimals),
            .integer("points", course.points.count),
        ]), to: id)
    }

    /// Runner `runner` follows course `name` (nil: none), for its live run and the next ones (`course:`, or its
    /// page): the course taken (nil for none), or nil when the hub holds no course of that name (the server
    /// reads it first) or knows no such runner.
    package func follow(course name: String?, runner: String) -> Course?? {
        guard let entry = runners[runner] else { return nil }
        guard let name else {
            entry.course = nil
            entry.declinesCourse = true
            if let left = entry.run?.course { entry.run?.courseSetAside = left }
            entry.run?.course = nil
            entry.run?.courseFields = nil
            entry.run?.lastCourseUpdate = nil
            return .some(nil)
        }
        guard let course = courses[name] ?? configuration.raceCourse.flatMap({ $0.name == name ? $0 : nil }) else {
            return nil
        }
        entry.course = course
        entry.declinesCourse = false
        if let run = entry.run, case .running(_, let started) = run.phase {
            // The course it follows already, or the one it left this run: it goes on where it was.
            if let current = run.course, Self.isSame(current.course, course) {
                // Nothing changes.
            } else if let left = run.courseSetAside, Self.isSame(left.course, course) {
                run.course = left
                run.courseSetAside = nil
            } else {
                run.course = courseMatcher(for: course, goal: entry.goal, start: started)
                run.courseFields = nil
                run.lastCourseUpdate = nil
            }
        }
        effects.log("runner \(runner) follows course \(name)")
        return .some(course)
    }

    /// True when two courses are one (a course replaced under its name is another).
    static func isSame(_ a: Course, _ b: Course) -> Bool {
        a.name == b.name && a.length == b.length && a.points == b.points
    }

    /// A matcher for a run starting (or joining the course) at `start`, the goal's target time steadying the
    /// early predictions as for a goal.
    func courseMatcher(for course: Course, goal: GoalCommand?, start: Double) -> CourseMatcher {
        CourseMatcher(course: course, configuration: configuration.course, targetTime: goal?.targetTime, start: start)
    }

    /// The pace line's course fields and forecast for one course update; `started` is the run's unix start.
    static func paceCourse(_ update: CourseUpdate, started: Double) -> (PaceCourse, eta: Double?, finish: Double?) {
        let next = update.next
        let ahead = update.ahead.prefix(PaceCourse.maximumPointETAs)
        return (PaceCourse(along: update.along, togo: update.togo, nextPoint: next?.point.name,
                           nextPointETA: next?.eta.map { started + $0 },
                           pointETAs: ahead.map { point in update.eta(of: point).map { started + $0 } }),
                update.eta.map { started + $0 }, update.eta)
    }

    /// What a course update tells: `point:` to everyone following the runner, off / back on course to its coaches.
    func announceCourseEvents(_ update: CourseUpdate, of entry: RunnerEntry, _ snapshot: RunSnapshot, started: Double) {
        for event in update.events {
            switch event {
            case .passed(let passage):
                let point = PointEvent(runner: entry.name, name: passage.point.name, along: passage.point.along,
                                       timestamp: started + passage.time, elapsed: passage.time)
                let line = Self.line(point)
                if let run = entry.run, run.pointLines.count < LiveRun.keptPoints { run.pointLines.append(line) }
                broadcast(line, about: entry.name, to: .everyone, relaying: .point, event: .point(point))
            case .offCourse(let distance):
                broadcast(Self.line(AlertEvent(runner: entry.name, alert: "off_course", distance: snapshot.distance,
                                               elapsed: snapshot.elapsed, pace: snapshot.currentPace, off: distance)),
                          about: entry.name, to: .coaches)
            case .backOnCourse:
                broadcast(Self.line(AlertEvent(runner: entry.name, alert: "back_on_course", distance: snapshot.distance,
                                               elapsed: snapshot.elapsed, pace: snapshot.currentPace)),
                          about: entry.name, to: .coaches)
            case .finished:
                break  // the run ends when the runner stops it: its `end:` says so
            }
        }
    }
}
