import Foundation
import Testing
@testable import RunCore

/// Fixes arriving far faster than a phone sends them (a replayed backlog, a buggy or hostile client): the
/// lag window is bounded by count as well as by time, so each fix costs bounded work.
@Suite("Flat-out input")
struct FlatOutTests {
    /// `count` fixes `interval` seconds apart along a straight line north-east at `speed` m/s, with white
    /// noise of per-axis `sigma` metres.
    static func line(count: Int, interval: Double, speed: Double, sigma: Double, seed: UInt64) -> SyntheticRun {
        var rng = SeededRandom(seed: seed)
        var truth: [Coordinate] = [], fixes: [Fix] = []
        for index in 0..<count {
            let along = speed * interval * Double(index)
            truth.append(SyntheticRun.coordinate(east: along * 0.6, north: along * 0.8))
            let noisy = SyntheticRun.coordinate(east: along * 0.6 + sigma * rng.gaussian(),
                                                north: along * 0.8 + sigma * rng.gaussian())
            fixes.append(Fix(latitude: noisy.latitude, longitude: noisy.longitude, accuracy: 5,
                             timestamp: SyntheticRun.startTime + interval * Double(index)))
        }
        return SyntheticRun(truth: truth, fixes: fixes)
    }

    @Test("20,000 fixes 1 ms apart: every one accepted, the window never above its capacity, distance plausible",
          arguments: [(sigma: 0.0, seed: UInt64(1)), (sigma: 0.05, seed: UInt64(2))])
    func millisecondsApart(sigma: Double, seed: UInt64) throws {
        // 20 s at 5 m/s: 100 m of true path, sent as 20,000 fixes in a burst.
        let run = Self.line(count: 20_000, interval: 0.001, speed: 5, sigma: sigma, seed: seed)
        var tracker = RunTracker()
        let capacity = tracker.configuration.smoothingLagFixes
        var largestWindow = 0, accepted = 0, largestSettling = 0
        for fix in run.fixes {
            if tracker.add(fix, now: fix.timestamp).progress != nil { accepted += 1 }
            largestWindow = max(largestWindow, tracker.lagWindowCount)
            largestSettling = max(largestSettling, tracker.settling.count)
            #expect(tracker.lagWindowCount <= capacity)
        }
        // The points awaiting the long-horizon decision are bounded by count too.
        #expect(largestSettling == tracker.configuration.settlingFixes)
        #expect(accepted == run.fixes.count)
        #expect(largestWindow == capacity)  // the cap, not the 10 s lag (10,000 fixes), bounded the window
        let summary = tracker.finish()
        #expect(summary.track.count == run.fixes.count)
        #expect(summary.distance.isFinite && summary.movingTime.isFinite)
        // Smoothing may trim the start and end, and cm-level noise adds a little, but it is the 100 m line.
        #expect(summary.distance > 0.9 * run.trueLength && summary.distance < 1.1 * run.trueLength,
                "measured \(summary.distance) m of \(run.trueLength) m")
        #expect(summary.track.allSatisfy { $0.latitude.isFinite && $0.longitude.isFinite })
    }

    @Test("at one fix a second and at 5 Hz the window is bounded by the lag, not the capacity",
          arguments: [1.0, 0.2])
    func normalRatesUseTheLag(interval: Double) {
        let run = SyntheticRun.run(seed: 5, length: 600, interval: interval)
        var tracker = RunTracker()
        var largestWindow = 0
        for fix in run.fixes {
            _ = tracker.add(fix, now: fix.timestamp)
            largestWindow = max(largestWindow, tracker.lagWindowCount)
        }
        // The steps within the last `smoothingLag` seconds, not committed early.
        #expect(largestWindow == Int((tracker.configuration.smoothingLag / interval).rounded()))
        #expect(largestWindow < tracker.configuration.smoothingLagFixes)
    }

    @Test("a smaller capacity is honoured, and a capacity below one is treated as one (no smoothing left)")
    func configuredCapacity() {
        let run = SyntheticRun.run(seed: 6, length: 300)
        for (capacity, expected, tolerance) in [(4, 4, 0.05), (0, 1, 0.1)] {
            var configuration = TrackerConfiguration()
            configuration.smoothingLagFixes = capacity
            var tracker = RunTracker(configuration: configuration)
            var largestWindow = 0
            for fix in run.fixes {
                _ = tracker.add(fix, now: fix.timestamp)
                largestWindow = max(largestWindow, tracker.lagWindowCount)
            }
            #expect(largestWindow == expected)
            let distance = tracker.finish().distance
            #expect(abs(distance / run.trueLength - 1) < tolerance, "capacity \(capacity): \(distance) m of \(run.trueLength) m")
        }
    }
}
