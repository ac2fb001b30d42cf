import RunCore
import RunStore
import Wire

/// What a late web viewer needs to draw a live run at once, copied on the loop and turned into the stream's
/// `track` event off it: the run (its track is measured off the loop from the stored fixes, not copied from
/// the live engine), the run's badge lines, recent cheers and the latest pace.
package struct TrackSnapshot: Sendable {
    package let runner: String
    package let runID: Int64
    package let started: Double
    package let configuration: TrackerConfiguration
    package let history: BadgeHistory
    package let badgeLines: [[UInt8]]
    package let cheerLines: [[UInt8]]
    package let paceLine: [UInt8]?
    /// The runner's privacy zone: the track's ends are cut off (the viewer is never the runner).
    package var zone: PrivacyZone?
}

extension Hub {
    /// The snapshot of a runner's live run (nil without one).
    package func trackSnapshotSource(for name: String) -> TrackSnapshot? {
        guard let run = liveRun(of: name) else { return nil }
        let zone = (runners[name]?.privacy.zone).flatMap { $0 > 0 ? PrivacyZone(metres: $0) : nil }
        return TrackSnapshot(runner: name, runID: run.runID, started: run.started, configuration: configuration.tracker,
                             history: run.startHistory, badgeLines: run.badgeLines, cheerLines: run.cheerLines,
                             paceLine: run.latestPaceLine, zone: zone)
    }

    /// The broadcast events after `sequence` about the targets, oldest first; nil when some are no longer held
    /// (the stream then starts afresh).
    package func missedEvents(after sequence: UInt64, for targets: [WatchTarget], visibleTo id: ConnectionID) -> [EventBacklog.Entry]? {
        guard sequence <= eventSequence else { return nil }
        var names: Set<String> = []
        for target in targets {
            switch target {
            case .everyone: names.formUnion(backlogs.keys)
            case .runner(let name): names.insert(name)
            }
        }
        var missed: [EventBacklog.Entry] = []
        for name in names where mayFollow(name, id) {
            guard let backlog = backlogs[name] else { continue }
            guard let events = backlog.events(after: sequence) else { return nil }
            missed += events
        }
        return missed.sorted { $0.sequence < $1.sequence }
    }
}
