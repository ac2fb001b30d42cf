import Foundation
import Testing
@testable import RunCore

/// Gaps in a recording (issue 27): a silence crossed at walking pace or slower is a pause, one crossed at
/// running pace is run (``FilterConfiguration/pauseGap``).
@Suite("Recording gaps")
struct RecordingGapTests {
    /// One stretch of a recording: seconds of running at `speed` m/s due north, a fix every `interval` s, then
    /// (unless it is the last) a silence of `gap` seconds over which the wearer moved `across` metres north.
    struct Stretch {
        var seconds: Double
        var speed = 3.0
        var interval = 1.0
        var gap = 0.0
        var across = 0.0
    }

    /// The fixes of the stretches, with a little deterministic jitter (±1 m), and the true running distance
    /// and time (the stretches only, the gaps left out).
    static func recording(_ stretches: [Stretch]) -> (fixes: [Fix], distance: Double, time: Double) {
        var fixes: [Fix] = [], north = 0.0, time = 0.0, distance = 0.0, moving = 0.0
        var rng = SeededRandom(seed: 27)
        for (index, stretch) in stretches.enumerated() {
            let steps = Int((stretch.seconds / stretch.interval).rounded())
            for step in 0...steps {
                let jitter = (rng.uniform() - 0.5) * 2
                let point = SyntheticRun.coordinate(east: jitter, north: north + stretch.speed * stretch.interval * Double(step))
                fixes.append(Fix(latitude: point.latitude, longitude: point.longitude, accuracy: 5,
                                 timestamp: SyntheticRun.startTime + time + stretch.interval * Double(step)))
            }
            north += stretch.speed * stretch.interval * Double(steps)
            time += stretch.interval * Double(steps)
            distance += stretch.speed * stretch.interval * Double(steps)
            moving += stretch.interval * Double(steps)
            if index < stretches.count - 1 {
                north += stretch.across
                time += stretch.gap
            }
        }
        return (fixes, distance, moving)
    }

    static func measure(_ fixes: [Fix], configuration: TrackerConfiguration = .init())
        -> (summary: RunSummary, segmentStarts: [Int], gapPauses: Int) {
        var tracker = RunTracker(configuration: configuration)
        var starts: [Int] = []
        for (index, fix) in fixes.enumerated() where tracker.addNotingSegment(fix, now: fix.timestamp).startsSegment {
            starts.append(index)
        }
        return (tracker.finish(), starts, tracker.pausesInGaps)
    }

    /// The watch file of the issue: 1 Hz while moving, silent while its wearer stood or dawdled (233 s over
    /// 115 m, 428 s over 6 m, 1,075 s over 43 m).
    static let autoPaused = recording([
        Stretch(seconds: 600, gap: 233, across: 115), Stretch(seconds: 600, gap: 428, across: 6),
        Stretch(seconds: 600, gap: 1075, across: 43), Stretch(seconds: 600),
    ])

    @Test("an auto-paused watch's silences are pauses: moving time is the recording's, elapsed the whole")
    func silencesWhileStandingArePauses() {
        let (fixes, distance, time) = Self.autoPaused
        let (summary, starts, pauses) = Self.measure(fixes)
        #expect(pauses == 3)
        #expect(starts.count == 3, "each pause starts a segment: \(starts)")
        #expect(abs(summary.movingTime - time) < 30, "moving \(summary.movingTime) s of \(time) s running")
        #expect(summary.elapsed == fixes.last!.timestamp - fixes[0].timestamp)
        #expect(abs(summary.distance - distance) / distance < 0.01, "\(summary.distance) m of \(distance) m")
    }

    @Test("a silence crossed at running pace (a tunnel) is run: its distance and time count")
    func aTunnelAtRunningPaceCounts() {
        let (fixes, distance, time) = Self.recording([Stretch(seconds: 600, gap: 60, across: 180), Stretch(seconds: 600)])
        let (summary, starts, pauses) = Self.measure(fixes)
        #expect(pauses == 0 && starts.isEmpty)
        #expect(abs(summary.distance - (distance + 180)) < 20, "\(summary.distance)")
        #expect(abs(summary.movingTime - (time + 60)) < 15, "\(summary.movingTime)")
    }

    @Test("a walker's app that records every 15 s is not paused at every fix; a long silence still is")
    func sparseRecordingIsJudgedByItsOwnInterval() {
        let walk = Stretch(seconds: 900, speed: 1.3, interval: 15)
        let (fixes, distance, _) = Self.recording([walk])
        let (summary, _, pauses) = Self.measure(fixes)
        #expect(pauses == 0)
        #expect(summary.distance > 0.9 * distance, "\(summary.distance) of \(distance)")
        var stop = walk
        (stop.gap, stop.across) = (300, 10)
        let (withStop, _, _) = Self.recording([stop, walk])
        #expect(Self.measure(withStop).gapPauses == 1)
    }

    @Test("a silence shorter than the gap, or a refused fix after one, is no pause")
    func shortSilencesAndRefusedFixes() {
        let (short, _, _) = Self.recording([Stretch(seconds: 300, gap: 8, across: 2), Stretch(seconds: 300)])
        #expect(Self.measure(short).gapPauses == 0)
        // After 5 minutes' silence, an inaccurate fix where the runner stood says nothing: the pause is decided
        // by the next valid fix.
        var (fixes, _, _) = Self.recording([Stretch(seconds: 300, gap: 300, across: 5), Stretch(seconds: 300)])
        let resume = fixes.firstIndex { $0.timestamp > SyntheticRun.startTime + 400 }!
        var refused = fixes[resume]
        refused.accuracy = 50
        refused.timestamp -= 0.5
        fixes.insert(refused, at: resume)
        var tracker = RunTracker()
        for fix in fixes[..<resume] { _ = tracker.add(fix, now: fix.timestamp) }
        _ = tracker.add(refused, now: refused.timestamp)
        #expect(!tracker.isPaused && tracker.pausesInGaps == 0)
        _ = tracker.add(fixes[resume + 1], now: fixes[resume + 1].timestamp)
        #expect(tracker.pausesInGaps == 1)
    }

    @Test("the same fixes give the same pauses, whatever the tracker keeps")
    func gapsAreDeterministic() {
        let fixes = Self.autoPaused.fixes
        let kept = Self.measure(fixes), forgetting = Self.measure(fixes, configuration: .init().keepingTrack(false))
        #expect(kept.summary.distance == forgetting.summary.distance)
        #expect(kept.summary.movingTime == forgetting.summary.movingTime)
        #expect(kept.segmentStarts == forgetting.segmentStarts)
    }

    @Test("a recording's clock can start at a first point the filter refuses")
    func theClockStartsAtTheFirstRecordedPoint() {
        let (fixes, _, _) = Self.recording([Stretch(seconds: 600)])
        var first = fixes[0]
        first.timestamp -= 11
        first.accuracy = 40
        var tracker = RunTracker()
        tracker.startClock(at: first.timestamp)
        #expect(tracker.add(first, now: first.timestamp).progress == nil)
        for fix in fixes { _ = tracker.add(fix, now: fix.timestamp) }
        let summary = tracker.finish()
        #expect(summary.elapsed == fixes.last!.timestamp - first.timestamp)
        #expect(tracker.startedAt == first.timestamp)
        let kilometre = summary.splits.first { $0.unit == .kilometre }!
        #expect(abs(kilometre.duration - (1000 / 3 + 11)) < 3, "the first kilometre's clock started at the first point")
        // A later start never moves the clock, nor does a start after the first accepted fix.
        var late = RunTracker()
        late.startClock(at: fixes[0].timestamp + 5)
        _ = late.add(fixes[0], now: fixes[0].timestamp)
        late.startClock(at: fixes[0].timestamp - 100)
        #expect(late.startedAt == fixes[0].timestamp)
    }
}
