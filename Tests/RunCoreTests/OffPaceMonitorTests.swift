import RunCore
import Testing

/// The off-pace watch's hysteresis on a fake clock: a minute against the state flips it, either way.
@Suite struct OffPaceMonitorTests {
    /// Feeds `pace` once a second from `from` to `to` (inclusive); the changes seen, with their times.
    static func feed(_ monitor: inout OffPaceMonitor, _ pace: Double?, from: Int, to: Int) -> [(Int, OffPaceMonitor.Change)] {
        (from...to).compactMap { time in monitor.observe(currentPace: pace, at: Double(time)).map { (time, $0) } }
    }

    @Test func offPaceAfterTheHoldAndBackOnPaceAfterTheSameHold() {
        // Target 5:00/km, 5% margin (285–315 s/km on pace), held 60 s.
        var monitor = OffPaceMonitor(targetPace: 300, margin: 0.05, hold: 60)
        #expect(monitor.observe(currentPace: 314, at: 0) == nil, "within the margin")
        var changes = Self.feed(&monitor, 340, from: 10, to: 69)
        #expect(changes.isEmpty, "59 s off")
        #expect(monitor.observe(currentPace: 340, at: 70) == .offPace, "60 s off")
        changes = Self.feed(&monitor, 345, from: 71, to: 200)
        #expect(changes.isEmpty, "told once")
        changes = Self.feed(&monitor, 301, from: 201, to: 260)
        #expect(changes.isEmpty, "59 s back within the margin is not yet back on pace")
        #expect(monitor.observe(currentPace: 301, at: 261) == .backOnPace, "60 s within")
        changes = Self.feed(&monitor, 250, from: 262, to: 321)
        #expect(changes.isEmpty, "too fast counts as off too, after the hold")
        #expect(monitor.observe(currentPace: 250, at: 322) == .offPace)
        #expect(abs(monitor.deviation(of: 250) + 1.0 / 6) < 1e-12, "faster is negative")
    }

    /// The runner: steadily 11% slow, with a one-second dip inside the margin. It flapped
    /// (off_pace, back_on_pace at the dip, off_pace a minute later); now it is told once.
    @Test func aOneSecondDipDoesNotFlipAnAlert() {
        var monitor = OffPaceMonitor(targetPace: 300, margin: 0.05, hold: 60)
        var changes = Self.feed(&monitor, 333, from: 0, to: 100)
        #expect(changes.map(\.1) == [.offPace] && changes.first?.0 == 60)
        changes = Self.feed(&monitor, 305, from: 101, to: 101)
        changes += Self.feed(&monitor, 333, from: 102, to: 400)
        #expect(changes.isEmpty, "\(changes)")
        #expect(monitor.isOffPace)
        // And the other way: on pace, a one-second spike off never raises off_pace.
        var onPace = OffPaceMonitor(targetPace: 300, margin: 0.05, hold: 60)
        for second in stride(from: 0, to: 600, by: 30) {
            changes = Self.feed(&onPace, 302, from: second, to: second + 28) + Self.feed(&onPace, 360, from: second + 29, to: second + 29)
            #expect(changes.isEmpty)
        }
    }

    /// A missing pace (standing) neither ends a stretch nor counts toward it.
    @Test func aMissingPaceNeitherResetsNorCounts() {
        var monitor = OffPaceMonitor(targetPace: 300, margin: 0.05, hold: 60)
        var changes = Self.feed(&monitor, 340, from: 0, to: 40)
        changes += Self.feed(&monitor, nil, from: 41, to: 200)
        #expect(changes.isEmpty && monitor.contraryTime == 40, "a long stop is not time off pace")
        // 40 s counted before the stop, 20 more after it (the interval across the stop left out).
        changes = Self.feed(&monitor, 340, from: 201, to: 220)
        #expect(changes.isEmpty)
        #expect(monitor.observe(currentPace: 340, at: 221) == .offPace)
        // Back within the margin with stops between: 30 s, a stop, 30 s.
        changes = Self.feed(&monitor, 300, from: 222, to: 252) + Self.feed(&monitor, nil, from: 253, to: 400)
        changes += Self.feed(&monitor, 300, from: 401, to: 430)
        #expect(changes.isEmpty && monitor.isOffPace)
        #expect(monitor.observe(currentPace: 300, at: 431) == .backOnPace)
    }
}
