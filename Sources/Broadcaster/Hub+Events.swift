import RunCore
import RunStore
import Wire

// The engine's values as Wire events: the one place where RunCore meets the line format.

extension PaceEvent {
    /// `pace:` for a snapshot; `timestamp` is the fix's time exactly as the runner sent it.
    init(_ snapshot: RunSnapshot, runner: String, timestamp: String) {
        self.init(runner: runner, distance: snapshot.distance, elapsed: snapshot.elapsed, moving: snapshot.movingTime,
                  pace: snapshot.averagePace, current: snapshot.currentPace,
                  latitude: snapshot.coordinate.latitude, longitude: snapshot.coordinate.longitude,
                  timestamp: timestamp, nextBadge: snapshot.nextBadge?.id, left: snapshot.distanceToNextBadge)
    }
}

extension BadgeEvent {
    /// `badge:` for one award.
    init(_ award: BadgeAward, runner: String) {
        self.init(runner: runner, badgeID: award.badge.id, badgeName: award.badge.name, tier: award.tier.rawValue,
                  distance: award.badge.distance, elapsed: award.elapsed, speed: award.speed,
                  latitude: award.coordinate.latitude, longitude: award.coordinate.longitude,
                  timestamp: award.timestamp)
    }
}

extension SplitEvent {
    /// `split:` for one km or mile split.
    init(_ split: Split, runner: String) {
        self.init(runner: runner, unit: split.unit.rawValue, number: split.number, duration: split.duration,
                  pace: split.pace, elapsed: split.elapsed)
    }
}

extension RunEndedEvent {
    /// `end:` for a finished run.
    init(_ summary: RunSummary, runner: String, runID: Int64, saved: Bool, reason: RunEndReason) {
        var filtered: [String: Int] = [:]
        for (reason, count) in summary.rejections { filtered[reason.rawValue] = count }
        self.init(runner: runner, runID: runID, distance: summary.distance, elapsed: summary.elapsed,
                  moving: summary.movingTime, pace: summary.averagePace, saved: saved, reason: reason,
                  filtered: filtered)
    }
}
