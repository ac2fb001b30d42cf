import Foundation
import Testing
@testable import RunCore

/// Matching a fix costs the same on a 5 km and a 42 km course: it looks at the segments of a window around the
/// runner, never the whole course. Counted, not timed: ``CourseMatcher/segmentsExamined`` per fix.
@Suite struct CourseCostTests {
    /// The segments examined per fix over a steady run: mean and most, after the first fix (which searches
    /// the first ``CourseConfiguration/startWindow`` metres, once).
    static func cost(length: Double, interval: Double = 1) throws -> (mean: Double, most: Int, segments: Int) {
        let course = try SyntheticCourse.streets(seed: 7, length: length)
        let run = CourseRun.steady(on: course, seed: 3, interval: interval)
        var matcher = CourseMatcher(course: course, start: SyntheticRun.startTime)
        var total = 0, most = 0
        for fix in run.fixes {
            _ = matcher.update(with: fix)
            total += matcher.segmentsExamined
            if fix != run.fixes[0] { most = max(most, matcher.segmentsExamined) }
        }
        return (Double(total) / Double(run.fixes.count), most, course.distances.count - 1)
    }

    @Test(arguments: [1.0, 5.0]) func segmentsPerFixDoNotGrowWithTheCourse(interval: Double) throws {
        let short = try Self.cost(length: 5_000, interval: interval)
        let marathon = try Self.cost(length: 42_195, interval: interval)
        print("TABLE course cost at \(interval) s | 5 km (\(short.segments) segments): mean \(String(format: "%.1f", short.mean)), most \(short.most)"
              + " | 42.2 km (\(marathon.segments) segments): mean \(String(format: "%.1f", marathon.mean)), most \(marathon.most)")
        #expect(marathon.segments > 8 * short.segments)
        #expect(abs(marathon.mean / short.mean - 1) < 0.15, "\(short.mean) vs \(marathon.mean)")
        // The geometry is thinned (``Course/simplification``): a window holds a segment per straight and a few
        // per bend, so the most in one window follows the streets' bends, not the course's length.
        #expect(marathon.most <= 2 * short.most, "\(short.most) vs \(marathon.most)")
        // The window at 1 Hz is ~10 m behind to ~107 m ahead, 3 m segments at most: ~40, far below either course.
        #expect(Double(marathon.most) <= (10 + 100 + 7 * interval + 10) / 3 + 5)
    }
}
