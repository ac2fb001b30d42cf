import Testing
@testable import RunCore

@Suite("Fix filter")
struct FixFilterTests {
    static let t0 = 1_700_000_000.0
    static let start = Fix(latitude: 51.5, longitude: -0.12, accuracy: 5, timestamp: t0)

    /// A fix `metres` north of the start at `seconds` after it.
    static func after(_ seconds: Double, north metres: Double = 0, accuracy: Double = 5) -> Fix {
        Fix(latitude: 51.5 + metres / 111_250, longitude: -0.12, accuracy: accuracy, timestamp: t0 + seconds)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// Fixes given before the one judged (all accepted), each arriving as it is taken.
        var before: [Fix]
        var fix: Fix
        var now: Double
        var expected: FixRejection?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "good first fix", before: [], fix: start, now: t0, expected: nil),
        Case(name: "accuracy 19.9 accepted", before: [], fix: after(0, accuracy: 19.9), now: t0, expected: nil),
        Case(name: "accuracy 20 rejected", before: [], fix: after(0, accuracy: 20), now: t0, expected: .inaccurate),
        Case(name: "negative accuracy", before: [], fix: after(0, accuracy: -1), now: t0, expected: .inaccurate),
        Case(name: "NaN accuracy", before: [], fix: after(0, accuracy: .nan), now: t0, expected: .inaccurate),
        Case(name: "infinite accuracy", before: [], fix: after(0, accuracy: .infinity), now: t0, expected: .inaccurate),
        Case(name: "latitude above 90", before: [],
             fix: Fix(latitude: 90.0001, longitude: 0, accuracy: 5, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "latitude below -90", before: [],
             fix: Fix(latitude: -91, longitude: 0, accuracy: 5, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "longitude above 180", before: [],
             fix: Fix(latitude: 10, longitude: 180.5, accuracy: 5, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "longitude below -180", before: [],
             fix: Fix(latitude: 10, longitude: -181, accuracy: 5, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "NaN latitude", before: [],
             fix: Fix(latitude: .nan, longitude: 1, accuracy: 5, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "infinite longitude", before: [],
             fix: Fix(latitude: 1, longitude: -.infinity, accuracy: 5, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "exactly 0,0", before: [],
             fix: Fix(latitude: 0, longitude: 0, accuracy: 5, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "0,0.0001 is fine", before: [],
             fix: Fix(latitude: 0, longitude: 0.0001, accuracy: 5, timestamp: t0), now: t0, expected: nil),
        Case(name: "invalid beats inaccurate", before: [],
             fix: Fix(latitude: 100, longitude: 0, accuracy: 50, timestamp: t0), now: t0, expected: .invalid),
        Case(name: "duplicate timestamp", before: [start], fix: after(0, north: 1), now: t0 + 1, expected: .duplicate),
        Case(name: "out of order", before: [start, after(1, north: 3)], fix: after(0.5, north: 1), now: t0 + 2,
             expected: .outOfOrder),
        Case(name: "future beyond 24 h", before: [], fix: after(86_401), now: t0, expected: .future),
        Case(name: "future within 24 h accepted", before: [], fix: after(86_399), now: t0, expected: nil),
        Case(name: "future after the start", before: [start], fix: after(90_000), now: t0 + 1, expected: .future),
        Case(name: "first fix 9 s old starts the run", before: [], fix: start, now: t0 + 9, expected: nil),
        Case(name: "old fix after the start is a backlog, accepted", before: [start],
             fix: after(1, north: 3), now: t0 + 3600, expected: nil),
        Case(name: "jump: 50 m in 1 s", before: [start], fix: after(1, north: 50), now: t0 + 1, expected: .jump),
        Case(name: "12 m in 1 s is a sprint, not a jump", before: [start], fix: after(1, north: 12), now: t0 + 1,
             expected: nil),
        Case(name: "5 m in 0.2 s is judged over 1 s", before: [start], fix: after(0.2, north: 5), now: t0 + 1,
             expected: nil),
    ]

    @Test("each rule rejects with its reason", arguments: cases)
    func rule(_ c: Case) {
        var tracker = RunTracker()
        for fix in c.before {
            #expect(tracker.add(fix, now: fix.timestamp).progress != nil)
        }
        let outcome = tracker.add(c.fix, now: c.now)
        #expect(outcome.rejection == c.expected)
        if let reason = c.expected {
            #expect(tracker.rejections[reason] == 1)
            #expect(tracker.lastAcceptedTimestamp == c.before.last?.timestamp)
        } else {
            #expect(tracker.lastAcceptedTimestamp == c.fix.timestamp)
        }
    }

    @Test("every rule's limit is configurable")
    func configurable() {
        var configuration = TrackerConfiguration()
        configuration.filter.maximumAccuracy = 50
        configuration.filter.futureAllowance = 10
        configuration.filter.staleStartAge = 60
        configuration.filter.maximumSpeed = 100
        var tracker = RunTracker(configuration: configuration)
        #expect(tracker.add(Self.after(0, accuracy: 30), now: Self.t0 + 30).progress != nil)  // accurate enough, not stale
        #expect(tracker.add(Self.after(20), now: Self.t0 + 5).rejection == .future)
        #expect(tracker.add(Self.after(1, north: 80), now: Self.t0 + 1).progress != nil)  // not a jump at 100 m/s
    }

    @Test("a single spike does not derail the run")
    func singleSpike() {
        var tracker = RunTracker()
        var outcomes: [FixRejection?] = []
        for second in 0..<20 {
            let spike = second == 10
            let fix = Self.after(Double(second), north: Double(second) * 3 + (spike ? 200 : 0))
            outcomes.append(tracker.add(fix, now: fix.timestamp).rejection)
        }
        #expect(outcomes[10] == .jump)
        #expect(outcomes.enumerated().allSatisfy { $0.offset == 10 || $0.element == nil })
    }

    @Test("a stale start is held, and dropped as stale when the next fix is a fresh session's")
    func staleThenFresh() {
        var tracker = RunTracker()
        #expect(tracker.add(Self.start, now: Self.t0 + 300).isHeld)
        #expect(tracker.heldStart == Self.start && tracker.startedAt == nil && tracker.rejections.isEmpty)
        let fresh = Self.after(300, north: 10)
        let progress = tracker.add(fresh, now: Self.t0 + 300).progress
        #expect(progress?.started == true)
        #expect(progress?.snapshot.elapsed == 0)
        #expect(tracker.startedAt == fresh.timestamp && tracker.heldStart == nil)
        #expect(tracker.rejections == [.stale: 1])
    }

    @Test("a stale fix followed by the next of its recording starts the run at the stale one: a queue sent late")
    func staleBacklogStartsAtItsFirstFix() {
        var tracker = RunTracker()
        let now = Self.t0 + 480  // the phone was offline for 8 minutes
        #expect(tracker.add(Self.start, now: now).isHeld)
        let second = tracker.add(Self.after(4, north: 12), now: now + 0.1).progress
        #expect(second?.started == true)
        #expect(second?.snapshot.elapsed == 4)
        #expect(second?.awards.map(\.badge.name) == ["Earth"])
        #expect(tracker.startedAt == Self.t0 && tracker.rejections.isEmpty)
        for step in 2...120 {
            let fix = Self.after(Double(step * 4), north: Double(step) * 12)
            #expect(tracker.add(fix, now: now + Double(step) * 0.1).progress != nil)
        }
        #expect(tracker.finish().elapsed == 480)
        #expect(abs(tracker.finish().distance - 1440) < 30)
    }

    @Test("a held fix is confirmed by an older fix of its recording too (a queue sent newest first)")
    func heldConfirmedByAnOlderFix() {
        var tracker = RunTracker()
        #expect(tracker.add(Self.after(8, north: 24), now: Self.t0 + 600).isHeld)
        let progress = tracker.add(Self.after(4, north: 12), now: Self.t0 + 600).progress
        #expect(progress?.started == true && progress?.snapshot.elapsed == 4)
        #expect(tracker.startedAt == Self.t0 + 4 && tracker.lastAcceptedTimestamp == Self.t0 + 8)
    }

    @Test("a held fix is not confirmed by one too far from it, in time or in space")
    func heldRefuted() {
        // 500 s after a fix 900 s old: further than half its age; 4 s after but 500 m away.
        for next in [Self.after(500, north: 100), Self.after(4, north: 500)] {
            var tracker = RunTracker()
            #expect(tracker.add(Self.start, now: Self.t0 + 900).isHeld)
            // Both are stale too: the first is dropped, the second held in its place.
            #expect(tracker.add(next, now: Self.t0 + 900).isHeld)
            #expect(tracker.heldStart == next && tracker.rejections == [.stale: 1] && tracker.startedAt == nil)
        }
    }

    @Test("a sparse recording sent long after is one recording: its fixes are closer to each other than to now")
    func sparseBacklogStarts() {
        var tracker = RunTracker()
        #expect(tracker.add(Self.start, now: Self.t0 + 1800).isHeld)
        // 140 s apart, both half an hour old: more than the 60 s gap, far less than half the first one's age.
        #expect(tracker.add(Self.after(140, north: 400), now: Self.t0 + 1800).progress?.started == true)
        #expect(tracker.startedAt == Self.t0 && tracker.rejections.isEmpty)
    }

    @Test("a wrong first fix is left behind: agreeing fixes re-anchor the track")
    func reanchor() {
        var tracker = RunTracker()
        // The first accepted fix is 400 m off; the real run follows.
        #expect(tracker.add(Self.after(0, north: -400), now: Self.t0).progress?.started == true)
        var rejections: [FixRejection?] = []
        for second in 1...30 {
            let fix = Self.after(Double(second), north: Double(second) * 3)
            rejections.append(tracker.add(fix, now: fix.timestamp).rejection)
        }
        let reanchorAt = tracker.configuration.filter.reanchorCount - 1
        #expect(rejections[..<reanchorAt].allSatisfy { $0 == .jump })
        #expect(rejections[reanchorAt...].allSatisfy { $0 == nil })
        // The 400 m jump adds no distance; the run after it is about 3 m/s × the time since the re-anchor.
        let distance = tracker.finish().distance
        let expected = Double(30 - reanchorAt - 1) * 3
        #expect(abs(distance - expected) < 10, "distance \(distance), expected about \(expected)")
    }
}
