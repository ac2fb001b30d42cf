import Foundation
import Testing
@testable import RunCore

/// ``RunTracker/pause()``: a stopped watch, as a segment break in a recorded file.
@Suite("Pauses")
struct PauseTests {
    /// A straight run north at 3 m/s, one fix a second, from `start` at `origin`.
    static func run(from origin: Coordinate, start: Double, seconds: Int) -> [Fix] {
        (0..<seconds).map { step in
            let point = SyntheticRun.coordinate(east: 0, north: 3 * Double(step), origin: origin)
            return Fix(latitude: point.latitude, longitude: point.longitude, accuracy: 5, timestamp: start + Double(step))
        }
    }

    static let before = run(from: SyntheticRun.origin, start: SyntheticRun.startTime, seconds: 600)
    /// 30 minutes later and 3 km east: 1.7 m/s across the gap, a jog, so without a pause it counts.
    static let after = run(from: SyntheticRun.coordinate(east: 3000, north: 1800), start: SyntheticRun.startTime + 2400,
                           seconds: 600)

    static func measure(pausing: Bool) -> (summary: RunSummary, segmentStarts: [Int]) {
        var tracker = RunTracker()
        var starts: [Int] = []
        for (index, fix) in (before + after).enumerated() {
            if pausing, index == before.count { tracker.pause() }
            if tracker.addNotingSegment(fix, now: fix.timestamp).startsSegment { starts.append(index) }
        }
        return (tracker.finish(), starts)
    }

    @Test("no distance and no moving time across a pause; elapsed time runs; splits resume")
    func pauseCutsTheTrack() {
        let paused = Self.measure(pausing: true), joined = Self.measure(pausing: false)
        #expect(paused.segmentStarts == [Self.before.count])
        #expect(joined.segmentStarts.isEmpty)
        let gap = Self.after[0].timestamp - Self.before.last!.timestamp
        #expect(joined.summary.distance - paused.summary.distance > 0.95 * 3000, "the straight line is not run")
        // Each half is 599 × 3 m; the smoother trims a little at the ends of each.
        #expect(abs(paused.summary.distance - 2 * 1797) < 20, "\(paused.summary.distance)")
        #expect(paused.summary.elapsed == Self.after.last!.timestamp - Self.before[0].timestamp)
        #expect(paused.summary.movingTime <= paused.summary.elapsed - gap)
        let kilometres = paused.summary.splits.filter { $0.unit == .kilometre }
        #expect(kilometres.count == 3)
        #expect(kilometres.filter { $0.duration > gap }.count == 1, "only the split holding the pause is long")
        #expect(kilometres.last.map { abs($0.duration - 1000 / 3) < 5 } == true, "\(kilometres)")
    }

    @Test("the first fix after a pause is not a jump, but must still come later")
    func resumingFarAwayIsAcceptedButNotEarlier() {
        var tracker = RunTracker()
        for fix in Self.before { _ = tracker.add(fix, now: fix.timestamp) }
        let last = Self.before.last!
        // 20 km away one minute later: a jump without the pause.
        let far = SyntheticRun.coordinate(east: 20_000, north: 0)
        var probe = tracker
        let jump = Fix(latitude: far.latitude, longitude: far.longitude, accuracy: 5, timestamp: last.timestamp + 60)
        #expect(probe.add(jump, now: jump.timestamp).progress == nil)

        tracker.pause()
        #expect(tracker.isPaused)
        let early = Fix(latitude: far.latitude, longitude: far.longitude, accuracy: 5, timestamp: last.timestamp - 1)
        guard case .rejected(.outOfOrder) = tracker.addNotingSegment(early, now: early.timestamp).outcome else {
            Issue.record("a fix older than the pause was not rejected as out of order")
            return
        }
        let inaccurate = Fix(latitude: far.latitude, longitude: far.longitude, accuracy: 50, timestamp: jump.timestamp)
        #expect(tracker.addNotingSegment(inaccurate, now: inaccurate.timestamp).startsSegment == false)
        #expect(tracker.isPaused, "a rejected fix does not end the pause")
        let resumed = tracker.addNotingSegment(jump, now: jump.timestamp)
        #expect(resumed.startsSegment && resumed.outcome.progress != nil)
        #expect(!tracker.isPaused)
        #expect(tracker.finish().distance < 1800, "nothing counted across the pause")
    }

    @Test("a pause before the first fix, or twice in a row, changes nothing")
    func pauseIsIdempotent() {
        var once = RunTracker(), twice = RunTracker()
        twice.pause()
        #expect(!twice.isPaused)
        for (index, fix) in (Self.before + Self.after).enumerated() {
            if index == Self.before.count {
                once.pause()
                twice.pause()
                twice.pause()
            }
            _ = once.addNotingSegment(fix, now: fix.timestamp)
            _ = twice.addNotingSegment(fix, now: fix.timestamp)
        }
        #expect(once.finish().distance == twice.finish().distance)
        #expect(once.finish().splits == twice.finish().splits)
    }
}

extension PauseTests {
    @Test("a pause works without a smoothing lag too (every point final at once)")
    func pauseWithoutLag() {
        var configuration = TrackerConfiguration()
        configuration.smoothingLag = 0
        var tracker = RunTracker(configuration: configuration)
        var starts: [Int] = []
        for (index, fix) in (Self.before + Self.after).enumerated() {
            #expect(!tracker.isPaused)
            if index == Self.before.count {
                tracker.pause()
                #expect(tracker.isPaused)
            }
            if tracker.addNotingSegment(fix, now: fix.timestamp).startsSegment { starts.append(index) }
        }
        #expect(starts == [Self.before.count])
        #expect(tracker.finish().distance < 2 * 1800)
    }
}
