import Testing
@testable import RunCore

/// ``TrackerConfiguration/keepsTrack``: a tracker that forgets its old final points reports the same values,
/// bit for bit, in bounded memory.
@Suite("Forgetting the track")
struct ForgettingTrackTests {
    /// What one run gives, fix by fix and at the end.
    struct Outcome {
        var outcomes: [FixOutcome] = []
        var summary: RunSummary
        var storedPoints: Int
    }

    /// Feeds `fixes` to a tracker of the given mode, pausing before the indices in `pauses`.
    static func track(_ fixes: [Fix], keepsTrack: Bool, pauses: Set<Int> = []) -> Outcome {
        var tracker = RunTracker(configuration: TrackerConfiguration().keepingTrack(keepsTrack))
        var outcomes: [FixOutcome] = []
        for (index, fix) in fixes.enumerated() {
            if pauses.contains(index) { tracker.pause() }
            outcomes.append(tracker.addNotingSegment(fix, now: fix.timestamp).outcome)
        }
        return Outcome(outcomes: outcomes, summary: tracker.finish(), storedPoints: tracker.storedPointCount)
    }

    /// Whether two optional doubles are the same to the last bit.
    static func same(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }

    /// Whether two snapshots are the same to the last bit.
    static func same(_ a: RunSnapshot, _ b: RunSnapshot) -> Bool {
        same(a.distance, b.distance) && same(a.elapsed, b.elapsed) && same(a.movingTime, b.movingTime)
            && same(a.averagePace, b.averagePace) && same(a.currentPace, b.currentPace)
            && same(a.coordinate.latitude, b.coordinate.latitude) && same(a.coordinate.longitude, b.coordinate.longitude)
            && same(a.timestamp, b.timestamp) && a.nextBadge == b.nextBadge
            && same(a.distanceToNextBadge, b.distanceToNextBadge)
    }

    static func same(_ a: [Split], _ b: [Split]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy {
            $0.unit == $1.unit && $0.number == $1.number && same($0.elapsed, $1.elapsed)
                && same($0.duration, $1.duration) && same($0.pace, $1.pace)
        }
    }

    static func same(_ a: [CheckpointSplit], _ b: [CheckpointSplit]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy {
            $0.from == $1.from && $0.to == $1.to && same($0.duration, $1.duration) && same($0.pace, $1.pace)
        }
    }

    static func same(_ a: [BadgeAward], _ b: [BadgeAward]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy {
            $0.badge == $1.badge && $0.tier == $1.tier && same($0.elapsed, $1.elapsed) && same($0.speed, $1.speed)
                && same($0.coordinate.latitude, $1.coordinate.latitude)
                && same($0.coordinate.longitude, $1.coordinate.longitude) && same($0.timestamp, $1.timestamp)
        }
    }

    /// Runs `fixes` through both modes and checks every outcome and the summaries field by field; returns
    /// both for further checks.
    static func expectSameInBothModes(_ fixes: [Fix], pauses: Set<Int> = [],
                                      sourceLocation: SourceLocation = #_sourceLocation) -> (kept: Outcome, forgot: Outcome) {
        let kept = track(fixes, keepsTrack: true, pauses: pauses)
        let forgot = track(fixes, keepsTrack: false, pauses: pauses)
        #expect(kept.outcomes.count == forgot.outcomes.count, sourceLocation: sourceLocation)
        var differing: [Int] = []
        for (index, (a, b)) in zip(kept.outcomes, forgot.outcomes).enumerated() {
            switch (a, b) {
            case (.rejected(let x), .rejected(let y)) where x == y: continue
            case (.accepted(let x), .accepted(let y)):
                if x.started == y.started, same(x.snapshot, y.snapshot), same(x.awards, y.awards),
                   same(x.splits, y.splits) { continue }
            default: break
            }
            differing.append(index)
        }
        #expect(differing.isEmpty, "fixes whose outcome differs: \(differing.prefix(10))", sourceLocation: sourceLocation)
        let a = kept.summary, b = forgot.summary
        #expect(same(a.distance, b.distance), sourceLocation: sourceLocation)
        #expect(same(a.elapsed, b.elapsed), sourceLocation: sourceLocation)
        #expect(same(a.movingTime, b.movingTime), sourceLocation: sourceLocation)
        #expect(same(a.averagePace, b.averagePace), sourceLocation: sourceLocation)
        #expect(same(a.splits, b.splits), sourceLocation: sourceLocation)
        #expect(same(a.checkpoints, b.checkpoints), sourceLocation: sourceLocation)
        #expect(same(a.awards, b.awards), sourceLocation: sourceLocation)
        #expect(a.rejections == b.rejections, sourceLocation: sourceLocation)
        // The forgetting tracker's track is the kept one's newest points.
        #expect(Array(a.track.suffix(b.track.count)) == b.track, sourceLocation: sourceLocation)
        // It did forget: otherwise the comparison proves nothing.
        #expect(b.track.count < a.track.count / 4, sourceLocation: sourceLocation)
        #expect(forgot.storedPoints < kept.storedPoints / 4, sourceLocation: sourceLocation)
        return (kept, forgot)
    }

    @Test("runs at running pace report the same values in both modes", arguments: [1, 2, 3] as [UInt64])
    func running(seed: UInt64) {
        let run = SyntheticRun.run(seed: seed, length: 9000, speed: 3)
        let (kept, _) = Self.expectSameInBothModes(run.fixes)
        #expect(kept.summary.splits.count >= 8 + 5)
        #expect(kept.summary.checkpoints.count >= 3)
    }

    @Test("walks, run-walks and stops report the same values in both modes", arguments: [11, 12] as [UInt64])
    func walksAndStops(seed: UInt64) {
        let walk = SyntheticRun.route(seed: seed, stretches: [(1500, 1.3)], sigma: 4).run
        Self.expectSameInBothModes(walk.fixes)
        let runWalk = SyntheticRun.route(seed: seed, stretches: [(300, 3), (120, 1.2), (300, 3.2), (180, 1.0),
                                                                  (400, 2.8), (120, 1.3), (300, 3)], sigma: 4).run
        Self.expectSameInBothModes(runWalk.fixes)
        let stops = SyntheticRun.route(seed: seed, stretches: [(600, 3), (400, 0), (500, 3), (90, 0), (600, 2.9)],
                                       sigma: 5).run
        let (kept, _) = Self.expectSameInBothModes(stops.fixes)
        #expect(kept.summary.movingTime < kept.summary.elapsed - 300)
    }

    @Test("sparse fixes report the same values in both modes")
    func sparse() {
        let run = SyntheticRun.route(seed: 21, stretches: [(3000, 3), (300, 0), (3000, 2.5)], interval: 5, sigma: 4).run
        Self.expectSameInBothModes(run.fixes)
    }

    @Test("pauses and jumps report the same values in both modes", arguments: [31, 32] as [UInt64])
    func pausesAndJumps(seed: UInt64) {
        let run = SyntheticRun.run(seed: seed, length: 8000, speed: 3.2).withJumps(share: 0.03, seed: seed)
        // Pauses with the watch stopped: the fixes of the pause are not sent.
        var fixes: [Fix] = [], pauses: Set<Int> = []
        for (index, fix) in run.fixes.enumerated() {
            if [500, 1400, 2000].contains(index) { pauses.insert(fixes.count) }
            if (500..<560).contains(index) || (1400..<1700).contains(index) { continue }
            fixes.append(fix)
        }
        let (kept, _) = Self.expectSameInBothModes(fixes, pauses: pauses)
        #expect(kept.summary.rejections[.jump, default: 0] > 0)
    }

    @Test("a final track keeps absolute indices when it forgets, and searches from its first kept point")
    func finalTrackIndices() {
        var track = FinalTrack(), full: [TrackPoint] = []
        for index in 0..<1_000 {
            let point = TrackPoint(east: Double(index), north: 0, timestamp: 1000 + Double(index), accuracy: 5,
                                   moving: true, distance: 2.5 * Double(index), movingTime: Double(index))
            track.append(point)
            full.append(point)
        }
        let whole = FinalTrack(full)
        track.forget(before: 900)
        track.forget(before: 800)  // cursors only move forward: forgetting less changes nothing
        #expect(track.count == 1_000 && track.startIndex == 900)
        #expect(track.keptPoints.map(\.east) == (900..<1_000).map(Double.init))
        #expect(track[950] == full[950])
        #expect(track.storedCount == 100)
        // A distance beyond the first kept point's is found where the whole track finds it, bit for bit.
        #expect(track.crossing(of: 2_400.7) == whole.crossing(of: 2_400.7))
        #expect(track.lastIndex(atOrBefore: 1_990.5) == 990)
        // Forgetting a few more keeps storage until a batch is worth copying.
        track.forget(before: 910)
        #expect(track.startIndex == 910 && track.storedCount == 100 && track[910] == full[910])
    }

    @Test("a live run's stored points do not grow with its length")
    func boundedMemory() {
        // 50,000 fixes at 1 Hz, 3 m/s, with noise: nearly 14 hours.
        let run = SyntheticRun.run(seed: 41, length: 150_000, speed: 3)
        #expect(run.fixes.count > 50_000)
        var forgetting = RunTracker(configuration: TrackerConfiguration().keepingTrack(false))
        var keeping = RunTracker()
        var atThousand = 0, mostAfterThousand = 0, mostInFirstThousands = 0
        for (index, fix) in run.fixes.prefix(50_000).enumerated() {
            _ = forgetting.add(fix, now: fix.timestamp)
            if index < 2_000 { _ = keeping.add(fix, now: fix.timestamp) }
            let stored = forgetting.storedPointCount
            if index + 1 == 1_000 { atThousand = stored }
            if index + 1 >= 1_000 { mostAfterThousand = max(mostAfterThousand, stored) }
            if (1_000..<2_000).contains(index + 1) { mostInFirstThousands = max(mostInFirstThousands, stored) }
        }
        let atEnd = forgetting.storedPointCount
        // The same bound at fix 50,000 as at fix 1,000: a few hundred points (the settling track's minute,
        // the lag window, the newest final points, and storage not compacted yet).
        // (Storage is compacted in batches of 16 or more, so the peaks may differ by one batch.)
        #expect(atThousand <= 300)
        #expect(mostAfterThousand <= mostInFirstThousands + 16)
        #expect(atEnd <= mostInFirstThousands + 16)
        // A tracker keeping its track holds every point.
        #expect(keeping.storedPointCount >= 1_990)
        // And the run went on: the forgetting tracker measured all of it.
        #expect((forgetting.snapshot?.distance ?? 0) > 140_000)
    }
}
