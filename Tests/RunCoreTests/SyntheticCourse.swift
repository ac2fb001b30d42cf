import Foundation
@testable import RunCore

/// Courses for the course tests, in metres east/north of ``SyntheticRun/origin``, and runs along them.
enum SyntheticCourse {
    /// The 12 km course's corners: 2 km east; a 1 km out-and-back spur north on one road (the runner comes back
    /// on the way they went); 1.5 km east; a loop north, west and back south across the first leg (a crossing at
    /// 2800,0: 4.8 km and 9.2 km along); east, and south to the finish at 12 km.
    static let twelveKCorners: [(east: Double, north: Double)] = [
        (0, 0), (2000, 0), (2000, 1000), (2000, 0), (3500, 0), (3500, 1500), (2800, 1500), (2800, -500),
        (4500, -500), (4500, -1100),
    ]

    /// The 12 km course's named points in course order, with where each is along the course (by construction).
    static let twelveKPoints: [(name: String, east: Double, north: Double, along: Double)] = [
        ("Spur aid (out)", 2000, 500, 2500), ("Turn", 2000, 1000, 3000), ("Spur aid (back)", 2000, 500, 3500),
        ("Crossing", 2800, 0, 4800), ("Loop top", 3150, 1500, 7350), ("Crossing again", 2800, 0, 9200),
        ("Last aid", 4500, -800, 11_700),
    ]

    /// A polyline through `corners` with a vertex every `spacing` metres or less, as a route planner exports.
    static func path(_ corners: [(east: Double, north: Double)], spacing: Double = 20) -> [Coordinate] {
        var path = [SyntheticRun.coordinate(east: corners[0].east, north: corners[0].north)]
        for (a, b) in zip(corners, corners.dropFirst()) {
            let length = hypot(b.east - a.east, b.north - a.north)
            let steps = max(1, Int((length / spacing).rounded(.up)))
            for step in 1...steps {
                let share = Double(step) / Double(steps)
                path.append(SyntheticRun.coordinate(east: a.east + share * (b.east - a.east),
                                                    north: a.north + share * (b.north - a.north)))
            }
        }
        return path
    }

    /// The 12 km course with its points.
    static func twelveK() throws -> Course {
        try Course(name: "12 km", path: path(twelveKCorners),
                   waypoints: twelveKPoints.map { ($0.name, SyntheticRun.coordinate(east: $0.east, north: $0.north)) })
    }

    /// A street-like course (the true path of ``SyntheticRun/run(seed:length:speed:interval:sigmas:correlation:origin:)``,
    /// a vertex every 3 m, as a recorded track) of `length` metres.
    static func streets(seed: UInt64, length: Double) throws -> Course {
        try Course(name: "streets", path: SyntheticRun.run(seed: seed, length: length, speed: 3).truth)
    }
}

/// A run along a course: fixes with per-axis AR(1) noise, and where the runner truly was along the course.
struct CourseRun {
    /// The fixes, one per `interval`.
    var fixes: [Fix]
    /// Metres along the course the runner truly was at each fix (off the course: where they left it).
    var trueAlong: [Double]
    /// The runner's true distance from the course at each fix, metres.
    var trueOff: [Double]

    /// A runner whose true position at `t` seconds is `position(t)`: (metres along `course`, metres off it to the
    /// left), until `duration`.
    static func make(on course: Course, seed: UInt64, sigma: Double, correlation: Double = 0.95, interval: Double = 1,
                     duration: Double, position: (Double) -> (along: Double, off: Double)) -> CourseRun {
        var rng = SeededRandom(seed: seed)
        var noise = CorrelatedGPSNoise(sigma: sigma, correlation: correlation, random: &rng)
        var run = CourseRun(fixes: [], trueAlong: [], trueOff: [])
        var time = 0.0
        while time <= duration + 1e-9 {
            let (along, off) = position(time)
            var point = course.coordinate(at: along)
            if off != 0 {
                // Left of the course's direction there, `off` metres.
                let ahead = course.coordinate(at: min(along + 1, course.length))
                let behind = course.coordinate(at: max(along - 1, 0))
                let scale = LocalScale(latitude: point.latitude)
                let dx = (ahead.longitude - behind.longitude) * scale.metresPerDegreeEast
                let dy = (ahead.latitude - behind.latitude) * scale.metresPerDegreeNorth
                let norm = hypot(dx, dy)
                point = SyntheticRun.coordinate(east: -dy / norm * off, north: dx / norm * off, origin: point)
            }
            let error = noise.next(&rng)
            let noisy = SyntheticRun.coordinate(east: error.east, north: error.north, origin: point)
            run.fixes.append(Fix(latitude: noisy.latitude, longitude: noisy.longitude, accuracy: 1.5 * sigma,
                                 timestamp: SyntheticRun.startTime + time))
            run.trueAlong.append(along)
            run.trueOff.append(abs(off))
            time += interval
        }
        return run
    }

    /// A steady runner at `speed` m/s from the start to the finish.
    static func steady(on course: Course, seed: UInt64, speed: Double = 3.3, sigma: Double = 4,
                       interval: Double = 1) -> CourseRun {
        make(on: course, seed: seed, sigma: sigma, interval: interval, duration: course.length / speed + 30) {
            (min($0 * speed, course.length), 0)
        }
    }

    /// The updates of a fresh matcher fed every fix.
    func updates(on course: Course, configuration: CourseConfiguration = CourseConfiguration(),
                 targetTime: Double? = nil) -> [CourseUpdate] {
        var matcher = CourseMatcher(course: course, configuration: configuration, targetTime: targetTime,
                                    start: SyntheticRun.startTime)
        return fixes.map { matcher.update(with: $0) }
    }
}
