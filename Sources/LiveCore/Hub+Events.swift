import RunCore
import RunStore
import Wire

// The engine's values as Wire events: the one place where RunCore meets the line format.

extension PaceEvent {
    /// `pace:` for a snapshot; `timestamp` is the fix's time exactly as the runner sent it.
    package init(_ snapshot: RunSnapshot, runner: String, timestamp: String) {
        self.init(runner: runner, distance: snapshot.distance, elapsed: snapshot.elapsed, moving: snapshot.movingTime,
                  pace: snapshot.averagePace, current: snapshot.currentPace,
                  latitude: snapshot.coordinate.latitude, longitude: snapshot.coordinate.longitude,
                  timestamp: timestamp, nextBadge: snapshot.nextBadge?.id, left: snapshot.distanceToNextBadge)
    }
}

extension BadgeEvent {
    /// `badge:` for one award.
    package init(_ award: BadgeAward, runner: String) {
        self.init(runner: runner, badgeID: award.badge.id, badgeName: award.badge.name, tier: award.tier.rawValue,
                  distance: award.badge.distance, elapsed: award.elapsed, speed: award.speed,
                  latitude: award.coordinate.latitude, longitude: award.coordinate.longitude,
                  timestamp: award.timestamp)
    }
}

extension BadgeEvent {
    /// `badge:` of a stored award as others see it: no position inside the runner's privacy zone (judged on the
    /// run's distance `total` and its track's `ends`).
    package init(_ award: BadgeAward, runner: String, hiddenBy zone: PrivacyZone?, total: Double, ends: [Coordinate]) {
        self.init(award, runner: runner)
        guard let zone else { return }
        if zone.hides(award.badge.distance, of: total) || zone.hides(award.coordinate, near: ends) {
            latitude = nil
            longitude = nil
        }
    }
}

extension SplitEvent {
    /// `split:` for one km or mile split.
    package init(_ split: Split, runner: String) {
        self.init(runner: runner, unit: split.unit.rawValue, number: split.number, duration: split.duration,
                  pace: split.pace, elapsed: split.elapsed)
    }
}

extension RunEndedEvent {
    /// `end:` for a finished run.
    package init(_ summary: RunSummary, runner: String, runID: Int64, saved: Bool, reason: RunEndReason) {
        var filtered: [String: Int] = [:]
        for (reason, count) in summary.rejections { filtered[reason.rawValue] = count }
        self.init(runner: runner, runID: runID, distance: summary.distance, elapsed: summary.elapsed,
                  moving: summary.movingTime, pace: summary.averagePace, saved: saved, reason: reason,
                  filtered: filtered, elevationGain: summary.elevationGain, elevationLoss: summary.elevationLoss)
    }
}

extension RunListItemEvent {
    /// `item:` for one stored run.
    package init(_ record: RunRecord) {
        self.init(runner: record.runner, runID: record.id, date: ISODate.string(unixSeconds: record.started),
                  distance: record.distance, elapsed: record.elapsed, pace: record.averagePace)
    }
}

extension RunSummaryEvent {
    /// `summary:` for one run.
    package init(_ record: RunRecord) {
        self.init(runner: record.runner, runID: record.id, status: record.status.rawValue,
                  date: ISODate.string(unixSeconds: record.started), distance: record.distance,
                  elapsed: record.elapsed, moving: record.movingTime, pace: record.averagePace,
                  filtered: record.rejections.values.reduce(0, +), elevationGain: record.elevationGain,
                  elevationLoss: record.elevationLoss)
    }
}

extension CheckpointEvent {
    /// `checkpoint:` for the stretch between two badges.
    package init(_ checkpoint: CheckpointSplit, runner: String) {
        self.init(runner: runner, from: checkpoint.from.id, to: checkpoint.to.id, duration: checkpoint.duration,
                  pace: checkpoint.pace)
    }
}

extension BoardEvent {
    /// `board:` for one badge: earned or not (and what is left to run), silver, gold, best pace, and for earned
    /// badges the paces that would win silver and gold.
    package init(badge: Badge, runner: String, record: BadgeHistory.Record?, farthest: Double) {
        func pace(_ speed: Double) -> Double? { speed > 0 ? 1000 / speed : nil }
        self.init(runner: runner, badgeID: badge.id, badgeName: badge.name, distance: badge.distance,
                  earned: record.map { ISODate.string(unixSeconds: $0.earnedAt) },
                  silver: record?.silverAt.map { ISODate.string(unixSeconds: $0) },
                  gold: record?.goldAt.map { ISODate.string(unixSeconds: $0) },
                  best: record.flatMap { pace($0.bestSpeed) },
                  left: record == nil ? max(0, badge.distance - farthest) : 0,
                  silverPace: record.flatMap { pace($0.referenceSpeed * BadgeHistory.silverRatio) },
                  goldPace: record.flatMap { pace($0.referenceSpeed * BadgeHistory.goldRatio) })
    }
}
