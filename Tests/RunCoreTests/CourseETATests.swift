import Foundation
import Testing
@testable import RunCore

/// ETAs on the 12 km course for a steady runner (3.3 m/s, 4 m correlated noise): every point's within 2% of the
/// real arrival from a quarter of the course on, the finish's within 1% from half way; passages timed to seconds.
@Suite struct CourseETATests {
    /// Targets as a factor of the runner's true pace: none, on it, the runner 10% faster or slower than it.
    static let targets: [(name: String, factor: Double?)] = [("none", nil), ("on pace", 1), ("runner 10% slow", 1 / 1.1),
                                                             ("runner 10% fast", 1.1)]

    @Test(arguments: UInt64(1)...8) func aSteadyRunnersETAsConverge(seed: UInt64) throws {
        let course = try SyntheticCourse.twelveK()
        let speed = 3.3, finish = course.length / speed
        let run = CourseRun.steady(on: course, seed: seed, speed: speed)
        for target in Self.targets {
            let updates = run.updates(on: course, targetTime: target.factor.map { finish * $0 })
            var worstPoint = 0.0, worstFinish = 0.0
            for (index, update) in updates.enumerated() where update.togo > 0 {
                let share = run.trueAlong[index] / course.length
                guard share >= 0.25 else { continue }
                let eta = try #require(update.eta, "no finish ETA at \(run.trueAlong[index]) m")
                let finishError = abs(eta - finish) / finish
                worstPoint = max(worstPoint, finishError)
                for ahead in update.upcoming {
                    let arrival = ahead.point.along / speed
                    let error = abs(try #require(ahead.eta) - arrival) / arrival
                    worstPoint = max(worstPoint, error)
                }
                if share >= 0.5 { worstFinish = max(worstFinish, finishError) }
            }
            print("TABLE course ETA seed \(seed) target \(target.name) | worst point from 25%: "
                  + String(format: "%.2f%%, finish from 50%%: %.2f%%", worstPoint * 100, worstFinish * 100))
            // The goals hold with no target or one the runner keeps; a target 10% off is 17% of the base pace at a
            // quarter of the course (the target counts as 600 m run at it), so it gets 3% there.
            let fits = target.factor == nil || target.factor == 1
            #expect(worstPoint <= (fits ? 0.02 : 0.03), "seed \(seed), target \(target.name): \(worstPoint)")
            #expect(worstFinish <= 0.01, "seed \(seed), target \(target.name): \(worstFinish)")
        }
    }

    @Test(arguments: UInt64(1)...8) func everyPointIsPassedOnceInOrderOnTime(seed: UInt64) throws {
        let course = try SyntheticCourse.twelveK()
        let run = CourseRun.steady(on: course, seed: seed)
        var passages: [CoursePassage] = [], finished: [Double] = []
        for update in run.updates(on: course) {
            for event in update.events {
                if case .passed(let passage) = event { passages.append(passage) }
                if case .finished(let time) = event { finished.append(time) }
            }
        }
        #expect(passages.map(\.point) == course.points)
        for passage in passages {
            #expect(abs(passage.time - passage.point.along / 3.3) <= 5, "seed \(seed), \(passage.point.name): \(passage.time) s")
        }
        #expect(finished.count == 1 && abs(finished[0] - course.length / 3.3) <= 5, "seed \(seed): \(finished) of \(course.length / 3.3)")
    }
}
