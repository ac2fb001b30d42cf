import RunCore
import RunStore
import Wire

/// A live run another loop owns, as its relayed events show it: what this loop needs to show it to late
/// followers (the run so far), the overview, event streams and the history commands. Loop thread only.
package final class RemoteRun {
    let runID: Int64
    let started: Double
    /// The runner's badge history when the run began.
    package let startHistory: BadgeHistory
    let startedLine: [UInt8]
    var latestPaceLine: [UInt8]?
    var badgeLines: [[UInt8]] = []
    var cheerLines: [[UInt8]] = []
    /// The course points passed (`point:`), in order: late followers get them, and the course's passing times
    /// come from them.
    var pointLines: [[UInt8]] = []
    /// The figures of the newest `pace:`.
    var distance: Double = 0
    var elapsed: Double = 0
    var movingTime: Double = 0
    var rejections: [FixRejection: Int] = [:]
    /// The goal distance as the owner's paces relay it.
    var goal: Double?
    /// The course the run follows, as the owner's paces relay it (where along it is in ``latestPaceLine``).
    package var course: String?
    /// True between the owner's relayed `off_course` and `back_on_course` alerts.
    var isOffCourse = false
    /// The run's newest SOS and battery alert, for late followers.
    var sosAlert: DeviceAlertLines?
    var batteryAlert: DeviceAlertLines?

    init(runID: Int64, started: Double, startHistory: BadgeHistory, startedLine: [UInt8]) {
        self.runID = runID
        self.started = started
        self.startHistory = startHistory
        self.startedLine = startedLine
    }
}

/// A live run wherever it runs (this loop or another): what the read-only answers need of it.
package struct LiveRunView {
    package let runID: Int64
    let started: Double
    let startHistory: BadgeHistory
    let startedLine: [UInt8]?
    package let latestPaceLine: [UInt8]?
    let badgeLines: [[UInt8]]
    let cheerLines: [[UInt8]]
    package let distance: Double
    let elapsed: Double
    let movingTime: Double
    let rejections: [FixRejection: Int]
    /// The course points passed so far.
    var pointLines: [[UInt8]] = []

    /// `record` with this run's values so far when it is this run's row: the store's row of a live run holds
    /// no measurements yet.
    package func standing(in record: RunRecord) -> RunRecord {
        guard record.id == runID, record.status == .live else { return record }
        var record = record
        record.distance = distance
        record.elapsed = elapsed
        record.movingTime = movingTime
        record.rejections = rejections
        return record
    }
}

extension Hub {
    /// The live run of a runner, on this loop or (with several loops) another; nil when not running.
    package func liveRun(of name: String) -> LiveRunView? {
        if let run = runners[name]?.run, case .running(let id, let started) = run.phase {
            let snapshot = run.tracker.snapshot
            return LiveRunView(runID: id, started: started, startHistory: run.startHistory,
                               startedLine: run.startedLine, latestPaceLine: run.latestPaceLine,
                               badgeLines: run.badgeLines, cheerLines: run.cheerLines,
                               distance: snapshot?.distance ?? 0, elapsed: snapshot?.elapsed ?? 0,
                               movingTime: snapshot?.movingTime ?? 0, rejections: run.tracker.rejections,
                               pointLines: run.pointLines)
        }
        guard let remote = remoteRuns[name] else { return nil }
        return LiveRunView(runID: remote.runID, started: remote.started, startHistory: remote.startHistory,
                           startedLine: remote.startedLine, latestPaceLine: remote.latestPaceLine,
                           badgeLines: remote.badgeLines, cheerLines: remote.cheerLines, distance: remote.distance,
                           elapsed: remote.elapsed, movingTime: remote.movingTime, rejections: remote.rejections,
                           pointLines: remote.pointLines)
    }

    /// The names of every runner with a live run, on any loop.
    var liveRunnerNames: [String] {
        runners.values.compactMap { $0.run?.id != nil ? $0.name : nil } + remoteRuns.keys
    }

    /// News from another loop's or node's hub: an event, a runner's change, share or device tokens.
    package func hear(_ news: HubNews, now: Double) {
        switch news {
        case .event(let event): receiveRelayed(event, now: now)
        case .runner(let name, let keyHash, let history, let privacy):
            relayedRunner(name, keyHash: keyHash, history: history, privacy: privacy)
        case .shares(let runner, let added, let removed): relayedShares(of: runner, added: added, removed: removed)
        case .deviceAdded(let token): relayedDevices(added: token, removed: [])
        case .devicesRemoved(let hashes): relayedDevices(added: nil, removed: hashes)
        }
    }

    /// Another loop's event: kept for late followers and resuming streams, then delivered to this loop's
    /// followers of the runner (and, for a cheer from another loop, to the runner if it runs here).
    func receiveRelayed(_ event: RelayedEvent, now: Double) {
        assertOnLoop()
        let name = event.runner
        eventSequence = max(eventSequence, event.sequence)
        let local = runners[name]?.run
        var isPace = false
        switch event.kind {
        case .started(let runID, let started, let history):
            remoteRuns[name] = RemoteRun(runID: runID, started: started, startHistory: history, startedLine: event.line)
            // A run id this loop runs itself stays its own: only its owner publishes a run's events, so another
            // run under the same id is another cluster's on a shared Redis (tests do that), not this one.
            if !isLocalRun(runID) { runOwners[runID] = name }
            rank(name, distance: 0, elapsed: 0, moving: 0, goal: nil)
        case .pace(let distance, let elapsed, let moving, let rejections, let goal, let course):
            isPace = true
            if let remote = remoteRuns[name] {
                remote.course = course
                let previous = (remote.distance, remote.elapsed)
                remote.latestPaceLine = event.line
                remote.distance = distance
                remote.elapsed = elapsed
                remote.movingTime = moving
                remote.rejections = rejections
                remote.goal = goal
                rank(name, distance: distance, elapsed: elapsed, moving: moving, goal: goal)
                if !event.isCatchUp { passCheckpoints(of: name, runID: remote.runID, from: previous, to: (distance, elapsed)) }
            }
        case .badge:
            remoteRuns[name]?.badgeLines.append(event.line)
        case .point:
            if let remote = remoteRuns[name], remote.pointLines.count < LiveRun.keptPoints {
                remote.pointLines.append(event.line)
            }
        case .cheer:
            if let local { Self.keep(cheer: event.line, in: &local.cheerLines) }
            if let remote = remoteRuns[name] { Self.keep(cheer: event.line, in: &remote.cheerLines) }
        case .ended(let runID):
            if remoteRuns.removeValue(forKey: name) != nil { unrank(name) }
            if !isLocalRun(runID) { finishedRuns.append((runID, now)) }
            recentlyEnded.append(event.line)
            if recentlyEnded.count > 20 { recentlyEnded.removeFirst() }
        case .deviceAlert(let fullLine):
            if let remote = remoteRuns[name] { remote.keep(DeviceAlertLines(sequence: event.sequence, line: event.line,
                                                                            fullLine: fullLine)) }
        case .other:
            // The owner's coaches' alerts say when its runner left the course and came back.
            if let remote = remoteRuns[name], event.line.starts(with: Self.alertPrefix),
               let alert = try? AlertEvent(line: String(decoding: event.line.dropLast(), as: UTF8.self)) {
                if alert.alert == "off_course" { remote.isOffCourse = true }
                if alert.alert == "back_on_course" { remote.isOffCourse = false }
            }
        }
        if event.isCatchUp {
            // A snapshot after a gap on the bus: the followers here get the run as it stands, as a late joiner does.
            if event.isSnapshot {
                let begun = beginBroadcast(event.sequence)
                defer { endBroadcast(begun) }
                deliver(event.line, about: name, own: nil, to: event.audience, droppable: isPace)
            }
            return
        }
        // Numbered around the event's own deliveries only: a checkpoint alert it led to above is another event.
        let begun = beginBroadcast(event.sequence)
        defer { endBroadcast(begun) }
        if local != nil || remoteRuns[name] != nil || isEnd(event.kind) {
            backlogs[name, default: EventBacklog(capacity: configuration.eventBacklog)]
                .append(event.sequence, event.line, as: LineRole.of(event.line, about: name, droppable: isPace))
        }
        if case .deviceAlert(let fullLine) = event.kind {
            return deliverDeviceAlert(event.line, fullLine: fullLine, about: name, own: runners[name]?.connection)
        }
        deliver(event.line, about: name, own: local == nil ? nil : runners[name]?.connection, to: event.audience,
                droppable: isPace)
    }

    /// What an `alert:` line starts with.
    private static let alertPrefix = Array("alert:".utf8)

    /// True when `runID` is a live run of this loop.
    func isLocalRun(_ runID: Int64) -> Bool {
        guard let owner = runOwners[runID] else { return false }
        return runners[owner]?.run?.id == runID
    }

    private func isEnd(_ kind: RelayedEvent.Kind) -> Bool {
        if case .ended = kind { return true }
        return false
    }

    /// Keeps a cheer for late web viewers, at most ``LiveRun/keptCheers``.
    static func keep(cheer line: [UInt8], in cheers: inout [[UInt8]]) {
        cheers.append(line)
        if cheers.count > LiveRun.keptCheers { cheers.removeFirst() }
    }

    /// Another loop's runner was claimed or finished a run: known here at once, before the store has it.
    func relayedRunner(_ name: String, keyHash: String, history: BadgeHistory, privacy: RunnerPrivacy) {
        unknownNames.remove(name)
        if let entry = runners[name] {
            entry.history = history
        } else {
            runners[name] = RunnerEntry(name: name, keyHash: keyHash, history: history)
        }
        privacyChanged(name, to: privacy)
    }

    /// A runner as the store has it, read off the loop: known here from now on (an entry here already wins).
    package func know(_ record: RunnerRecord) {
        guard runners[record.name] == nil else { return }
        unknownNames.remove(record.name)
        remember(record)
    }

    /// Another loop issued or revoked device tokens.
    func relayedDevices(added: DeviceToken?, removed: [String]) {
        if let added { rememberDevice(added) }
        for hash in removed { forgetDevice(hash) }
    }
}
