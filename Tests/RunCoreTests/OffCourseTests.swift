import Foundation
import Testing
@testable import RunCore

/// Off course: a 300 m detour raises `off_course` and `back_on_course` each once, promptly; GPS noise on the
/// course never raises one, over a whole marathon.
@Suite struct OffCourseTests {
    /// Just beyond the distance, the whole off duration; twice as far, half of it; a far fix alone, nothing.
    @Test func theHoldShortensTheFartherOff() {
        let configuration = CourseConfiguration()
        func firstOff(distance: Double, fixes: Int) -> Double? {
            var monitor = OffCourseMonitor()
            for second in 0..<fixes where monitor.observe(distance: distance, at: Double(second), configuration: configuration) == .offCourse {
                return Double(second)
            }
            return nil
        }
        #expect(firstOff(distance: 51, fixes: 60) == 30)
        #expect(firstOff(distance: 75, fixes: 60) == 20)
        #expect(firstOff(distance: 100, fixes: 60) == 15)
        #expect(firstOff(distance: 400, fixes: 60) == 15)
        #expect(firstOff(distance: 45, fixes: 300) == nil)
        var monitor = OffCourseMonitor()
        for second in 0..<120 {
            let wild = second % 14 == 13 ? 500.0 : 5
            #expect(monitor.observe(distance: wild, at: Double(second), configuration: configuration) == nil)
        }
    }

    /// At 600 m along the 12 km course's first leg the runner turns 90° left, runs 300 m away, comes back and
    /// carries on. Beyond 50 m from t0 + 15.2 s to t0 + 166.7 s (t0 = 181.8 s, leaving the course).
    @Test(arguments: UInt64(1)...6) func aDetourIsOffCourseAndBack(seed: UInt64) throws {
        let course = try SyntheticCourse.twelveK()
        let speed = 3.3, leave = 600 / speed, out = 300 / speed
        let run = CourseRun.make(on: course, seed: seed, sigma: 4, duration: leave + 2 * out + 300) { time in
            if time < leave { return (time * speed, 0) }
            if time < leave + out { return (600, (time - leave) * speed) }
            if time < leave + 2 * out { return (600, 300 - (time - leave - out) * speed) }
            return (600 + (time - leave - 2 * out) * speed, 0)
        }
        let beyond = leave + 50 / speed, within = leave + 2 * out - 50 / speed, rejoined = leave + 2 * out
        var offAt: [Double] = [], backAt: [Double] = []
        var matcher = CourseMatcher(course: course, start: SyntheticRun.startTime)
        for (index, fix) in run.fixes.enumerated() {
            let update = matcher.update(with: fix)
            for event in update.events {
                if case .offCourse(let distance) = event {
                    offAt.append(update.elapsed)
                    #expect(distance > 50 && abs(distance - run.trueOff[index]) < 15, "\(distance) m off")
                }
                if case .backOnCourse = event { backAt.append(update.elapsed) }
            }
            if offAt.count == 1, backAt.isEmpty { #expect(update.offCourse != nil) }
            if update.elapsed > rejoined + 30 {
                #expect(abs(update.along - run.trueAlong[index]) <= 25, "\(update.along) m at \(run.trueAlong[index])")
            }
        }
        #expect(offAt.count == 1 && backAt.count == 1, "off \(offAt), back \(backAt)")
        guard let off = offAt.first, let back = backAt.first else { return }
        #expect(off - beyond >= 0 && off - leave <= 45, "off_course \(off - leave) s after leaving the course")
        #expect(back - within <= 45 && back - rejoined <= 45, "back_on_course \(back - within) s after coming within 50 m")
        print("TABLE course detour seed \(seed) | off_course \(String(format: "%.0f", off - beyond)) s after 50 m off "
              + "(\(String(format: "%.0f", off - leave)) s after leaving), back_on_course "
              + "\(String(format: "%.0f", back - within)) s after within 50 m (\(String(format: "%+.0f", back - rejoined)) s after rejoining)")
    }

    /// A marathon on a street-like course (a 90° corner every minute or so, gentle bends), 5 m of correlated
    /// noise: no off_course, the finish reached, `along` within 25 m of the truth throughout.
    @Test(arguments: UInt64(1)...3) func aMarathonOnTheCourseIsNeverOff(seed: UInt64) throws {
        let course = try SyntheticCourse.streets(seed: 100 + seed, length: 42_195)
        let run = CourseRun.steady(on: course, seed: seed, speed: 3.3, sigma: 5)
        var events: [CourseEvent] = [], worst = 0.0, farthest = 0.0
        for (index, update) in run.updates(on: course).enumerated() {
            events += update.events.filter { if case .passed = $0 { false } else { true } }
            worst = max(worst, abs(update.along - run.trueAlong[index]))
            farthest = max(farthest, update.distanceFromCourse ?? 0)
        }
        #expect(events.count == 1 && events.first.map { if case .finished = $0 { true } else { false } } == true,
                "seed \(seed): \(events)")
        #expect(worst <= 25, "seed \(seed): \(worst) m")
        print("TABLE course marathon seed \(seed) | events \(events.count), worst along error \(String(format: "%.1f", worst)) m, "
              + "farthest fix from the course \(String(format: "%.1f", farthest)) m")
    }
}
