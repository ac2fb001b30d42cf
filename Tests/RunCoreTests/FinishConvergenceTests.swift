import Foundation
import Testing
@testable import RunCore

/// The predicted finish converges on a steady runner's real finish (issue 27: 33:07 predicted at 1:15 into a run
/// finished in 27:47 at a steady pace; Riegel's full exponent on a minute of data is ~13% pessimistic at 10% of
/// the goal). From 10% of the goal on the prediction is within 5% of the finish, with or without a target.
@Suite struct FinishConvergenceTests {
    static let goals: [(name: String, metres: Double)] = [("5 km", 5_000), ("10 km", 10_000), ("half", 21_097.5)]

    /// Targets as a factor of the runner's true pace: none, on it, the runner 10% slower than the target, 10% faster.
    static let targets: [(name: String, factor: Double?)] = [("none", nil), ("on pace", 1), ("runner 10% slow", 1 / 1.1),
                                                             ("runner 10% fast", 1.1)]

    @Test("a steady runner's prediction is within 5% of the finish from 10% of the goal on", arguments: [3.0, 4.5])
    func steadyArithmetic(speed: Double) {
        let pace = 1000 / speed
        for goal in Self.goals {
            let finish = goal.metres / speed
            for target in Self.targets {
                var row: [String] = [], worst = 0.0
                for percent in 1...99 {
                    let distance = goal.metres * Double(percent) / 100, time = distance / speed
                    let predicted = FinishPrediction.totalTime(toCover: goal.metres, distance: distance, elapsed: time,
                                                               moving: time, currentPace: pace,
                                                               targetPace: target.factor.map { pace * $0 })
                    let error = predicted.map { $0 / finish - 1 }
                    if percent >= 10 {
                        let error = error ?? .infinity
                        worst = max(worst, abs(error))
                        #expect(abs(error) <= 0.05, "\(goal.name), target \(target.name), at \(percent)%: \(predicted ?? -1) s of \(finish) s")
                    }
                    if [2, 5, 10, 20, 30, 50, 70, 90].contains(percent) {
                        row.append(error.map { String(format: "%+.1f%%", $0 * 100) } ?? "-")
                    }
                }
                print("TABLE finish \(goal.name) at \(speed) m/s, target \(target.name) | at 2/5/10/20/30/50/70/90%: "
                      + row.joined(separator: " ") + String(format: " | worst from 10%%: %.1f%%", worst * 100))
            }
        }
    }

    /// Through the tracker: GPS noise, corners, the standing start, the current pace as measured. Under 2–3 m of
    /// noise: under 4–5 m the current pace itself strays ~25% at corners (the smoothing's), and the prediction
    /// strays up to ~5.3% mid-run with it.
    @Test("measured live, a steady 5 km's prediction is within 5% of its finish from 500 m on")
    func steadyMeasured() throws {
        let goal = 5_000.0
        for seed in UInt64(1)...5 {
            let run = SyntheticRun.run(seed: seed, length: 5_300, speed: 3, sigmas: 2...3)
            for factor in [nil, 1.0] as [Double?] {
                var tracker = RunTracker()
                var predictions: [(distance: Double, elapsed: Double, total: Double?)] = []
                var finish: Double?
                for fix in run.fixes {
                    guard let snapshot = tracker.add(fix, now: fix.timestamp).progress?.snapshot else { continue }
                    if snapshot.distance >= goal {
                        finish = snapshot.elapsed
                        break
                    }
                    predictions.append((snapshot.distance, snapshot.elapsed, FinishPrediction.totalTime(
                        toCover: goal, distance: snapshot.distance, elapsed: snapshot.elapsed, moving: snapshot.movingTime,
                        currentPace: snapshot.currentPace, targetPace: factor.map { $0 * 1000 / 3 })))
                }
                let real = try #require(finish)
                var worst = 0.0
                for prediction in predictions where prediction.distance >= 0.1 * goal {
                    let error = (prediction.total ?? .infinity) / real - 1
                    worst = max(worst, abs(error))
                    #expect(abs(error) <= 0.05, "seed \(seed), at \(prediction.distance) m: \(prediction.total ?? -1) s of \(real) s")
                }
                let early = predictions.first { $0.elapsed >= 75 }?.total.map { String(format: "%.0f", $0) } ?? "-"
                print(String(format: "TABLE finish measured 5 km seed %llu target %@: finished %.0f s, predicted at 1:15 %@ s, worst from 500 m %.1f%%",
                             seed, factor == nil ? "none" : "on pace", real, early, worst * 100))
            }
        }
    }
}
