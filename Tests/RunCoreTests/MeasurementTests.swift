import Testing
@testable import RunCore

@Suite("Measurement")
struct MeasurementTests {
    @Test("standing still for 10 minutes under 4 m correlated jitter adds under 10 m", arguments: UInt64(1)...6)
    func standingStillCorrelated(seed: UInt64) {
        var tracker = RunTracker()
        tracker.feed(SyntheticRun.standing(seed: seed, sigma: 4).fixes)
        let summary = tracker.finish()
        #expect(summary.distance < 10)
        #expect(summary.elapsed == 600)
        #expect(summary.movingTime < 60)
        #expect(tracker.snapshot?.currentPace == nil)
    }

    @Test("standing still under 4 m white jitter adds under 10 m", arguments: UInt64(11)...13)
    func standingStillWhite(seed: UInt64) {
        var tracker = RunTracker()
        tracker.feed(SyntheticRun.standing(seed: seed, sigma: 4, correlation: 0).fixes)
        #expect(tracker.finish().distance < 10)
    }

    @Test("a noisy 5 km run measures within 1.5% of its true length", arguments: UInt64(1)...8)
    func noisyRun(seed: UInt64) {
        let run = SyntheticRun.run(seed: seed)
        var raw = 0.0
        for (a, b) in zip(run.fixes, run.fixes.dropFirst()) { raw += Geodesy.distance(from: a.coordinate, to: b.coordinate) }
        var tracker = RunTracker()
        let outcomes = tracker.feed(run.fixes)
        #expect(outcomes.allSatisfy { $0.progress != nil })
        let error = tracker.finish().distance / run.trueLength - 1
        #expect(abs(error) < 0.015, "seed \(seed): \(error * 100)% (raw sum \((raw / run.trueLength - 1) * 100)%)")
        // The noise is as bad as advertised: the naive sum is several percent long.
        #expect(raw / run.trueLength - 1 > 0.04)
    }

    @Test("live distance settles into the final one within the lag")
    func liveSettles() {
        let run = SyntheticRun.run(seed: 42, length: 2000)
        var tracker = RunTracker()
        var live: [Double] = []
        for fix in run.fixes { live.append(tracker.add(fix, now: fix.timestamp).progress!.snapshot.distance) }
        let summary = tracker.finish()
        #expect(live.last == summary.distance)
        // Distances shown live never run far ahead of or behind the final track at the same time.
        for (index, fix) in run.fixes.enumerated() where index % 100 == 0 && index > 0 {
            let final = summary.track.prefix { $0.timestamp <= fix.timestamp }
            var length = 0.0
            for (a, b) in zip(final, final.dropFirst()) { length += Geodesy.distance(from: a.coordinate, to: b.coordinate) }
            #expect(abs(live[index] - length) < 25, "at \(index): live \(live[index]) vs final track \(length)")
        }
    }

    @Test("elapsed, moving time, paces and position on a run with a pause")
    func snapshotMetrics() throws {
        // 300 s at 3 m/s, 120 s standing, 300 s at 3 m/s.
        let run = SyntheticRun.clean([(300, 3), (120, 0), (300, 3)])
        var tracker = RunTracker()
        var paces: [Double?] = []
        for fix in run.fixes { paces.append(tracker.add(fix, now: fix.timestamp).progress!.snapshot.currentPace) }
        let snapshot = try #require(tracker.snapshot)
        #expect(snapshot.elapsed == 720)
        #expect(abs(snapshot.distance - 1800) < 5)
        #expect(abs(snapshot.movingTime - 600) < 25)
        #expect(abs(try #require(snapshot.averagePace) - 1000 / 3) < 15)
        #expect(paces[10] == nil)  // younger than the window
        #expect(abs(try #require(paces[200]) - 1000 / 3) < 3)
        #expect(paces[400] == nil)  // standing
        #expect(abs(try #require(paces[700]) - 1000 / 3) < 3)
        #expect(Geodesy.distance(from: snapshot.coordinate, to: run.truth.last!) < 3)
        #expect(snapshot.timestamp == run.fixes.last!.timestamp)
        #expect(snapshot.nextBadge?.id == "magnetotail")
        #expect(abs(snapshot.distanceToNextBadge - (snapshot.nextBadge!.distance - snapshot.distance)) < 1e-9)
    }

    @Test("before any fix there is no snapshot, and an empty run finishes empty")
    func emptyRun() {
        var tracker = RunTracker()
        #expect(tracker.snapshot == nil)
        #expect(tracker.add(Fix(latitude: 0, longitude: 0, accuracy: 5, timestamp: 1), now: 1).rejection == .invalid)
        let summary = tracker.finish()
        #expect(summary.distance == 0 && summary.track.isEmpty && summary.averagePace == nil)
        #expect(summary.rejections == [.invalid: 1])
    }

    @Test("the same fixes and clocks give identical outcomes")
    func deterministic() {
        var fixes = SyntheticRun.run(seed: 7, length: 3000).fixes
        fixes.insert(fixes[100], at: 101)  // duplicate
        fixes[300].latitude += 0.01  // jump
        fixes[500].accuracy = 40  // inaccurate
        var history = BadgeHistory()
        _ = history.recordCheckpoint(Badges.badge(id: "moon")!, speed: 2.5, at: 1)
        func replay() -> ([RunSnapshot?], [[BadgeAward]], [[Split]], [FixRejection?], RunTracker) {
            var tracker = RunTracker(history: history)
            let outcomes = fixes.map { tracker.add($0, now: $0.timestamp + 0.5) }
            return (outcomes.map { $0.progress?.snapshot }, outcomes.map { $0.progress?.awards ?? [] },
                    outcomes.map { $0.progress?.splits ?? [] }, outcomes.map(\.rejection), tracker)
        }
        let first = replay(), second = replay()
        #expect(first.0 == second.0)
        #expect(first.1 == second.1)
        #expect(first.2 == second.2)
        #expect(first.3 == second.3)
        #expect(first.4.history == second.4.history)
        #expect(first.4.finish().track == second.4.finish().track)
        #expect(first.3.compactMap { $0 }.count == 3)
    }
}
