import Foundation
import Testing
@testable import RunCore

/// The current pace after a stop (issue 27): a runner at 3 m/s stands, then runs on; the `cur=` a coach sees
/// right after the restart read ~205 s/km for ~10 s at a true 333 s/km (here, before the fix: up to 5 times off
/// either way in the minute after the restart).
///
/// On a straight route under 2 m of noise (a phone under open sky): a 30 s window's pace there stays within 10%
/// while running steadily, so an error after the stop is the stop's. (Under 4 m, or round 90° corners that the
/// smoothing cuts, the steady pace itself strays 20–28%, which is the smoothing's, not the stop's.)
@Suite struct CurrentPaceTests {
    static let speed = 3.0
    static let truePace = 1000 / speed

    /// Every snapshot's current pace on a route (straight unless said): `leg` s at 3 m/s, a stop of `stop` s,
    /// `leg` s more.
    /// Returns the worst relative error seen after the restart (nil paces excepted), and the failures.
    static func check(seed: UInt64, stop: Double, leg: Double = 300, sigma: Double = 2, straight: Bool = true, keepsTrack: Bool = true,
                      configuration: TrackerConfiguration = TrackerConfiguration())
        -> (worstAfter: Double, worstSteady: Double, failures: [String]) {
        let (run, _) = SyntheticRun.route(seed: seed, stretches: [(leg, speed), (stop, 0), (leg, speed)], sigma: sigma,
                                            winding: !straight)
        var tracker = RunTracker(configuration: configuration.keepingTrack(keepsTrack))
        let start = run.fixes[0].timestamp, stopStart = start + leg, restart = stopStart + stop
        var worstAfter = 0.0, worstSteady = 0.0, failures: [String] = []
        for fix in run.fixes {
            guard let snapshot = tracker.add(fix, now: fix.timestamp).progress?.snapshot else { continue }
            let time = fix.timestamp
            let error = snapshot.currentPace.map { $0 / truePace - 1 }
            let label = String(format: "seed %llu stop %.0f s, at %.0f s (%+.0f s from the restart): cur %@", seed, stop,
                               time - start, time - restart, snapshot.currentPace.map { String(format: "%.1f", $0) } ?? "-")
            // Right after the restart: within 10%, or nil until it can be.
            if time >= restart, time < restart + 60 {
                if let error {
                    worstAfter = max(worstAfter, abs(error))
                    if abs(error) > 0.1 { failures.append(label) }
                }
            }
            // Steady running, a window clear of the start and the stop: always shown, within 10%.
            let steady = (time >= start + 40 && time <= stopStart) || (time >= restart + 60)
            if steady {
                if let error {
                    worstSteady = max(worstSteady, abs(error))
                    if abs(error) > 0.1 { failures.append(label + " (steady)") }
                } else {
                    failures.append(label + " (steady, missing)")
                }
            }
        }
        return (worstAfter, worstSteady, failures)
    }

    @Test("after a stop the current pace is within 10% of the true pace, or not shown yet",
          arguments: [20.0, 30.0, 60.0, 120.0])
    func afterAStop(stop: Double) {
        var worstAfter = 0.0, worstSteady = 0.0
        for seed in UInt64(1)...8 {
            let result = Self.check(seed: seed, stop: stop)
            worstAfter = max(worstAfter, result.worstAfter)
            worstSteady = max(worstSteady, result.worstSteady)
            #expect(result.failures.isEmpty, "\(result.failures.prefix(5))")
        }
        print(String(format: "TABLE current pace, %.0f s stop: worst error in the minute after the restart %.1f%%, steady %.1f%%",
                     stop, worstAfter * 100, worstSteady * 100))
    }

    /// Under 3 m of noise a 30 s window strays 10–15% even on a steady run, so there the test is relative: the
    /// minute after the restart is no worse than the same run's steady stretches (or 10%). Before
    /// ``SettingOffEdge``, 15 of these 64 runs read up to 42% worse after the stop (a short stop judged
    /// moving and the smoother's ramp out of it inside the window), as on seeds the engine was not tuned on.
    @Test("under 3 m noise the minute after a stop strays no more than steady running does",
          arguments: [20.0, 30.0, 60.0, 120.0])
    func afterAStopUnderMoreNoise(stop: Double) {
        for seed in UInt64(201)...216 {
            let result = Self.check(seed: seed, stop: stop, sigma: 3)
            #expect(result.worstAfter <= max(0.1, result.worstSteady) + 0.01,
                    "seed \(seed): \(result.worstAfter) after the restart, \(result.worstSteady) steady")
        }
    }

    @Test("a tracker that forgets its track shows the same current paces")
    func forgetting() {
        let kept = Self.check(seed: 3, stop: 60), forgot = Self.check(seed: 3, stop: 60, keepsTrack: false)
        #expect(kept.worstAfter == forgot.worstAfter && kept.worstSteady == forgot.worstSteady)
    }
}
