import Foundation
import Testing
@testable import RunCore

/// A 5 km course's true altitude at `distance` metres: 2 km climbing 100 m, 1.5 km descending 60 m, then flat.
private func courseAltitude(_ distance: Double) -> Double {
    switch distance {
    case ..<2000: 200 + 100 * distance / 2000
    case ..<3500: 300 - 60 * (distance - 2000) / 1500
    default: 240
    }
}

/// The fixes of `SyntheticRun.run` with the course's altitude plus independent Gaussian noise of `sigma` metres.
private func climb(seed: UInt64, sigma: Double, speed: Double = 3) -> [Fix] {
    var run = SyntheticRun.run(seed: seed, speed: speed)
    var rng = SeededRandom(seed: seed &+ 1000)
    for index in run.fixes.indices {
        let distance = Double(index) * speed
        run.fixes[index].altitude = courseAltitude(distance) + sigma * rng.gaussian()
    }
    return run.fixes
}

@Suite("Elevation")
struct ElevationTests {
    @Test("a climb of 100 m and a descent of 60 m under 5 m GPS altitude noise measure within 10%", arguments: 1...8)
    func noisyClimb(seed: UInt64) {
        let fixes = climb(seed: UInt64(seed), sigma: 5)
        let measured = ElevationMeter.measure(fixes)!
        print("seed \(seed): gain \(measured.gain) m (true 100), loss \(measured.loss) m (true 60)")
        #expect(abs(measured.gain - 100) <= 10)
        #expect(abs(measured.loss - 60) <= 6)
        // The naive sum of rises counts the noise as climbing, many times over.
        let naive = zip(fixes, fixes.dropFirst()).reduce(0) { $0 + max(0, $1.1.altitude! - $1.0.altitude!) }
        #expect(naive > 1000)
    }

    @Test("the tracker measures the same gain and loss live and at the finish", arguments: [1, 5])
    func tracker(seed: UInt64) throws {
        let fixes = climb(seed: UInt64(seed), sigma: 5)
        var tracker = RunTracker()
        var live: RunSnapshot?
        for fix in fixes {
            if case .accepted(let progress) = tracker.add(fix, now: fix.timestamp) { live = progress.snapshot }
        }
        let summary = tracker.finish()
        let expected = ElevationMeter.measure(fixes)!
        #expect(try #require(summary.elevationGain) == expected.gain)
        #expect(try #require(summary.elevationLoss) == expected.loss)
        #expect(live?.elevationGain == summary.elevationGain)
        #expect(tracker.snapshot?.elevationLoss == summary.elevationLoss)
    }

    @Test("a tracker that does not keep its track measures the same")
    func forgetting() {
        let fixes = climb(seed: 3, sigma: 5)
        var keeping = RunTracker(), forgetting = RunTracker(configuration: { var c = TrackerConfiguration(); c.keepsTrack = false; return c }())
        for fix in fixes {
            _ = keeping.add(fix, now: fix.timestamp)
            _ = forgetting.add(fix, now: fix.timestamp)
        }
        #expect(keeping.finish().elevationGain == forgetting.finish().elevationGain)
        #expect(keeping.finish().elevationLoss == forgetting.finish().elevationLoss)
    }

    @Test("an hour on the flat under 5 m noise climbs less than 10 m", arguments: 1...8)
    func flat(seed: UInt64) {
        var rng = SeededRandom(seed: UInt64(seed))
        var meter = ElevationMeter()
        for second in 0..<3600 {
            meter.add(altitude: 50 + 5 * rng.gaussian(), timestamp: Double(second))
        }
        print("flat seed \(seed): gain \(meter.gain) m, loss \(meter.loss) m over 10.8 km")
        #expect(meter.gain < 10 && meter.loss < 10)
    }

    @Test("a smooth (barometric) profile measures within 4% at 1 Hz, 7% with fixes every 5 s",
          arguments: [(1.0, 0.04), (5.0, 0.07)])
    func barometric(interval: Double, tolerance: Double) {
        var meter = ElevationMeter()
        var time = 0.0
        // Three hills of 40 m over 6 km at 3 m/s: 120 m up and 120 m down.
        while time <= 2000 {
            let altitude = 100 + 20 * (1 - cos(2 * .pi * 3 * time / 2000))
            meter.add(altitude: altitude, timestamp: time)
            time += interval
        }
        print("barometric every \(interval) s: gain \(meter.gain) m, loss \(meter.loss) m (true 120, 120)")
        #expect(abs(meter.gain - 120) <= 120 * tolerance)
        #expect(abs(meter.loss - 120) <= 120 * tolerance)
    }

    @Test("no altitude, no gain: nil, not zero")
    func noAltitude() {
        let run = SyntheticRun.run(seed: 1, length: 500)
        var tracker = RunTracker()
        for fix in run.fixes { _ = tracker.add(fix, now: fix.timestamp) }
        #expect(tracker.finish().elevationGain == nil)
        #expect(tracker.snapshot?.elevationLoss == nil)
        #expect(ElevationMeter.measure(run.fixes) == nil)
    }

    @Test("wiggles under the threshold count nothing; the first altitude's error is averaged away")
    func hysteresis() {
        var meter = ElevationMeter()
        for second in 0..<600 { meter.add(altitude: 10 + 1.5 * sin(Double(second) / 20), timestamp: Double(second)) }
        #expect(meter.gain == 0 && meter.loss == 0)
        var jumpy = ElevationMeter()
        jumpy.add(altitude: 20, timestamp: 0)  // 10 m off: the next ones are all at 10
        for second in 1..<120 { jumpy.add(altitude: 10, timestamp: Double(second)) }
        #expect(jumpy.loss == 0 && jumpy.gain == 0)
    }

    @Test("real Strava runs give plausible gains: no more than the sum of rises, climbing at least their range")
    func realRuns() throws {
        for (name, fixes) in try RealRuns.stravaRuns() {
            var tracker = RunTracker()
            for fix in fixes { _ = tracker.add(fix, now: fix.timestamp + 1) }
            let summary = tracker.finish()
            let altitudes = fixes.compactMap(\.altitude)
            let rises = zip(altitudes, altitudes.dropFirst()).reduce(0) { $0 + max(0, $1.1 - $1.0) }
            let gain = try #require(summary.elevationGain), loss = try #require(summary.elevationLoss)
            print("\(name): \(fixes.count) fixes, \(Int(summary.distance)) m, gain \(gain) m, loss \(loss) m, "
                + "sum of rises \(rises) m, range \(altitudes.min()!)...\(altitudes.max()!) m")
            // No file carries the device's own total ascent (no Garmin/Strava extension for it), so the checks are
            // the bounds any measure must meet: the meter never adds rises the altitudes do not have, goes up and
            // down at least the run's range (less what the threshold and the summits' rounding can miss), and
            // its net climb is the net change of altitude.
            let range = altitudes.max()! - altitudes.min()!
            #expect(gain <= rises + 0.001)
            #expect(gain + loss >= range - 15)
            #expect(abs((gain - loss) - (altitudes.last! - altitudes.first!)) <= 2 * 5 + 5)
        }
    }
}
