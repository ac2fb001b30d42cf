import Foundation
import Testing
@testable import RunCore

@Test func tuningProbe() {
    for q in [0.2, 0.3, 0.4] {
        for (on, off) in [(1.0, 0.6), (0.8, 0.5), (1.2, 0.8)] {
            var config = TrackerConfiguration()
            config.accelerationNoise = q
            config.movingSpeed = on
            config.stillSpeed = off
            var errors: [Double] = []
            for seed in UInt64(1)...20 {
                let run = SyntheticRun.run(seed: seed)
                var tracker = RunTracker(configuration: config)
                tracker.feed(run.fixes)
                errors.append((tracker.finish().distance / run.trueLength - 1) * 100)
            }
            var still: [Double] = []
            for seed in UInt64(1)...10 {
                var tracker = RunTracker(configuration: config)
                tracker.feed(SyntheticRun.standing(seed: seed, sigma: seed > 5 ? 5 : 4).fixes)
                still.append(tracker.finish().distance)
            }
            var white: [Double] = []
            for seed in UInt64(1)...4 {
                var tracker = RunTracker(configuration: config)
                tracker.feed(SyntheticRun.standing(seed: seed, correlation: 0).fixes)
                white.append(tracker.finish().distance)
            }
            let mean = errors.reduce(0, +) / Double(errors.count)
            print(String(format: "q=%.1f on=%.1f off=%.1f run%% mean %+.2f min %+.2f max %+.2f  still m: %@ white: %@", q, on, off,
                         mean, errors.min()!, errors.max()!,
                         still.map { String(format: "%.1f", $0) }.joined(separator: " "),
                         white.map { String(format: "%.1f", $0) }.joined(separator: " ")))
        }
    }
}
