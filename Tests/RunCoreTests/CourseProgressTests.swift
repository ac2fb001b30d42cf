import Foundation
import Testing
@testable import RunCore

/// Following a runner along the 12 km course (an out-and-back spur on one road, a loop crossing the first leg):
/// `along` tracks the truth, never steps back more than 10 m, never jumps to the spur's other leg or across
/// the crossing, and survives a missing stretch and a stop.
@Suite struct CourseProgressTests {
    static let seeds = Array(UInt64(1)...12)

    /// 3.3 m/s, 4 m per-axis AR(1) noise (0.95) at 1 Hz. The issue's goal is 0.5% of the distance at every
    /// kilometre. It holds from 3 km on for every seed; at 1 km it is 5 m, 1.25σ of the error along the course
    /// at that instant (correlated over ~20 s, so no filter averages it away): there the bound is 3σ (12 m).
    @Test(arguments: seeds) func alongTracksTheTruthOnTheTwelveKilometreCourse(seed: UInt64) throws {
        let course = try SyntheticCourse.twelveK()
        let run = CourseRun.steady(on: course, seed: seed)
        let updates = run.updates(on: course)
        var next = 1000.0, row: [String] = [], worstBack = 0.0, worstAny = 0.0
        for (index, update) in updates.enumerated() {
            let truth = run.trueAlong[index], error = update.along - truth
            worstAny = max(worstAny, abs(error))
            if index > 0 { worstBack = max(worstBack, updates[index - 1].along - update.along) }
            // The spur's legs are 2·(1000 − x) apart at x m up it and the crossing's passes 4.4 km: 25 m is neither.
            #expect(abs(error) <= 25, "seed \(seed): \(update.along) m at \(truth) m")
            if truth >= next, next < course.length {
                #expect(abs(error) <= max(0.005 * truth, 12), "seed \(seed) at km \(Int(next / 1000)): \(error) m")
                row.append(String(format: "%+.2f%%", error / truth * 100))
                next += 1000
            }
        }
        #expect(worstBack <= 10, "seed \(seed) stepped back \(worstBack) m")
        #expect(updates.last?.togo == 0 && updates.last?.events.isEmpty == true)
        #expect(updates.flatMap(\.events).filter { if case .offCourse = $0 { true } else { false } }.isEmpty)
        print("TABLE course along seed \(seed) | km 1…11: \(row.joined(separator: " ")) | worst \(String(format: "%.1f", worstAny)) m, back \(String(format: "%.1f", worstBack)) m")
    }

    /// 90 s without a fix from 150 m before the spur's turn to 150 m after it: the runner is found on the way
    /// back (the window grew at 7 m/s), not on the way out at the same spot.
    @Test(arguments: seeds.prefix(6)) func aMissingStretchAcrossTheTurnIsRecovered(seed: UInt64) throws {
        let course = try SyntheticCourse.twelveK()
        let run = CourseRun.steady(on: course, seed: seed)
        var matcher = CourseMatcher(course: course, start: SyntheticRun.startTime)
        var afterGap = 0
        for (index, fix) in run.fixes.enumerated() where !(2850...3150).contains(run.trueAlong[index]) {
            let update = matcher.update(with: fix)
            if run.trueAlong[index] > 3150, run.trueAlong[index] < 4000 {
                afterGap += 1
                #expect(abs(update.along - run.trueAlong[index]) <= 25,
                        "seed \(seed), fix \(afterGap) after the gap: \(update.along) m at \(run.trueAlong[index]) m")
                #expect(update.offCourse == nil)
            }
        }
        #expect(afterGap > 200)
    }

    /// A minute standing at 1 km (an aid station): `along` does not run on past the runner, and no point is
    /// passed early.
    @Test(arguments: seeds.prefix(6)) func aStopDoesNotRunAhead(seed: UInt64) throws {
        let course = try Course(name: "stop", path: SyntheticCourse.path([(0, 0), (3000, 0)]),
                                waypoints: [("Aid", CourseTests.at(1020, 0))])
        let run = CourseRun.make(on: course, seed: seed, sigma: 4, duration: 900) { time in
            let along = time < 303 ? time * 3.3 : time < 363 ? 999.9 : 999.9 + (time - 363) * 3.3
            return (min(along, course.length), 0)
        }
        var matcher = CourseMatcher(course: course, start: SyntheticRun.startTime)
        var worstAhead = 0.0
        for (index, fix) in run.fixes.enumerated() {
            let update = matcher.update(with: fix)
            worstAhead = max(worstAhead, update.along - run.trueAlong[index])
            for case .passed(let passage) in update.events {
                // The aid station is 20 m on, reached 6 s after the stop (the filter, standing, restarts behind: up to ~7 s late).
                #expect(abs(passage.time - 369) <= 10, "seed \(seed): passed at \(passage.time) s")
            }
        }
        #expect(worstAhead <= 15, "seed \(seed): \(worstAhead) m ahead")
        print("TABLE course stop seed \(seed) | worst ahead of the runner \(String(format: "%.1f", worstAhead)) m")
    }
}
