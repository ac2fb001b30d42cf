import Testing
@testable import RunCore

@Suite("Splits")
struct SplitTests {
    /// A hand-made track: cumulative distance and time at each point.
    static func track(_ points: [(distance: Double, seconds: Double)]) -> LiveTrack {
        LiveTrack(committed: FinalTrack(points.map {
            TrackPoint(east: 0, north: 0, timestamp: 1000 + $0.seconds,
                       accuracy: 5, moving: true, distance: $0.distance, movingTime: $0.seconds)
        }), tail: [])
    }

    @Test("splits are interpolated inside the crossing segment")
    func interpolation() {
        let track = Self.track([(0, 0), (900, 300), (1100, 350), (1700, 500), (2100, 700)])
        var counter = SplitCounter()
        let splits = counter.collect(upTo: 2100, start: 1000, on: track)
        #expect(splits.map(\.unit) == [.kilometre, .mile, .kilometre])
        #expect(splits.map(\.number) == [1, 1, 2])
        // 1000 m: halfway between 900 m at 300 s and 1100 m at 350 s.
        #expect(abs(splits[0].elapsed - 325) < 1e-9)
        #expect(abs(splits[0].duration - 325) < 1e-9)
        #expect(abs(splits[0].pace - 325) < 1e-9)
        // 1609.344 m: between 1100 m at 350 s and 1700 m at 500 s.
        let mile = 350 + (1609.344 - 1100) / 600 * 150
        #expect(abs(splits[1].elapsed - mile) < 1e-9)
        #expect(abs(splits[1].pace - mile / 1.609344) < 1e-9)
        // 2000 m: between 1700 m at 500 s and 2100 m at 700 s → 650 s; the second km took 325 s.
        #expect(abs(splits[2].elapsed - 650) < 1e-9)
        #expect(abs(splits[2].duration - 325) < 1e-9)
        // Nothing is reported twice.
        #expect(counter.collect(upTo: 2100, start: 1000, on: track).isEmpty)
    }

    @Test("live splits arrive once each, at the right times, on a run with a change of pace")
    func liveSplits() throws {
        // 1200 m at 4 m/s (300 s), then 2.5 m/s for 1000 s.
        let run = SyntheticRun.clean([(300, 4), (1000, 2.5)])
        var tracker = RunTracker()
        var live: [Split] = []
        for fix in run.fixes { live += tracker.add(fix, now: fix.timestamp).progress!.splits }
        #expect(live.filter { $0.unit == .kilometre }.map(\.number) == [1, 2, 3])
        #expect(live.filter { $0.unit == .mile }.map(\.number) == [1, 2])
        let km = live.filter { $0.unit == .kilometre }
        #expect(abs(km[0].elapsed - 250) < 1.5)
        #expect(abs(km[1].elapsed - (300 + 800 / 2.5)) < 1.5)
        #expect(abs(km[1].duration - (50 + 800 / 2.5)) < 1.5)
        #expect(abs(km[2].pace - 400) < 1.5)
        let mile = live.first { $0.unit == .mile }!
        #expect(abs(mile.elapsed - (300 + 409.344 / 2.5)) < 1.5)
        let summary = tracker.finish()
        #expect(summary.splits.map(\.number) == live.map(\.number))
        #expect(summary.splits.map(\.unit) == live.map(\.unit))
        for (a, b) in zip(summary.splits, live) { #expect(abs(a.elapsed - b.elapsed) < 1) }
    }

    @Test("checkpoints give the pace between consecutive badges, from Earth")
    func checkpoints() throws {
        let run = SyntheticRun.clean([(700, 3.5)])  // 2450 m: atmosphere, moon, magnetotail
        var tracker = RunTracker()
        tracker.feed(run.fixes)
        let checkpoints = tracker.finish().checkpoints
        #expect(checkpoints.map(\.from.id) == ["earth", "atmosphere", "moon"])
        #expect(checkpoints.map(\.to.id) == ["atmosphere", "moon", "magnetotail"])
        for checkpoint in checkpoints {
            #expect(abs(checkpoint.pace - 1000 / 3.5) < 2)
            #expect(abs(checkpoint.duration - (checkpoint.to.distance - checkpoint.from.distance) / 3.5) < 2)
        }
    }
}
