import RunCore
import Wire

/// What a phone says about its runner besides where they are: an SOS, and its battery.
///
/// Both go to everyone who may follow the runner (the runner, its spectators, its coaches, the web page's
/// stream), unlike the coach-only pace and checkpoint alerts: an SOS is for whoever is looking, and the battery
/// is what tells them how long the phone will keep reporting. Neither is ever droppable (only `pace:` is).
extension Hub {
    /// A battery below this percent raises `battery_low` (once)…
    static let lowBattery = 15.0
    /// …and it may be raised again only after the level came back to this.
    static let batteryRecovered = 20.0
    /// A `battery` alert goes out when the level moved by this many points since the last one sent.
    static let batteryStep = 5.0

    /// An app raised an alarm (`sos`, …) with a position of the runner's: to the runner's coaches at once.
    /// Called for every position that carries an alarm, before the position goes through the engine (an SOS is
    /// never held behind a backlog); a resent alarm (same timestamp) must not alert twice.
    ///
    /// Only `sos` raises an alert; other alarm words an app may send are logged. With or without a run: a runner
    /// whose phone's first position is an SOS is followed by name already, and its coaches hear it.
    package func raiseAlarm(_ alarm: String, at location: LocationCommand, for entry: RunnerEntry, now: Double) {
        assertOnLoop()
        let name = entry.name
        guard alarm == "sos" else {
            effects.log("runner \(name): alarm \(alarm.prefix(32)) ignored (only sos raises an alert)")
            return
        }
        guard recentAlarms.insert(runner: name, alarm: alarm, at: location.timestamp) else { return }
        let run = entry.run
        let figures = run?.lastAnnounced ?? (distance: 0, elapsed: 0)
        var full = AlertEvent(runner: name, alert: "sos", distance: figures.distance, elapsed: figures.elapsed,
                              pace: nil, latitude: location.latitude, longitude: location.longitude,
                              timestamp: location.timestampText, battery: run?.battery?.level)
        let fullLine = Self.line(full)
        var shownLine = fullLine
        if isInPrivacyZone(Coordinate(latitude: location.latitude, longitude: location.longitude), of: entry) {
            (full.latitude, full.longitude) = (nil, nil)
            shownLine = Self.line(full)
        }
        let sent = broadcastDeviceAlert(shownLine, fullLine: fullLine, of: entry)
        run?.sosAlert = sent
        effects.log("runner \(name): SOS at \(location.timestampText)")
    }

    /// The phone's battery level (percent) with a position stamped `time` (the newest stamp wins).
    ///
    /// Kept on the live run (a level before the run exists is not kept: the next position brings another).
    /// `battery_low` once when it falls below 15 %, again only after it came back to 20 % or more; `battery`
    /// when it moved by 5 points since the last level sent (and for the run's first level).
    package func noteBattery(_ level: Double, at time: Double, for entry: RunnerEntry, now: Double) {
        assertOnLoop()
        // Kept per run: a run that has not started (a held stale position) has no battery to speak of yet.
        guard let run = entry.run, run.id != nil, level.isFinite else { return }
        let level = min(max(level, 0), 100)
        if let kept = run.battery, kept.time > time { return }  // an older position of a backlog
        run.battery = (level, time)
        let kind: String
        if level < Self.lowBattery, !run.isBatteryLow {
            run.isBatteryLow = true
            kind = "battery_low"
        } else {
            if level >= Self.batteryRecovered { run.isBatteryLow = false }
            if let sent = run.announcedBattery, abs(level - sent) < Self.batteryStep { return }
            kind = "battery"
        }
        run.announcedBattery = level
        let figures = run.lastAnnounced
        let line = Self.line(AlertEvent(runner: entry.name, alert: kind, distance: figures.distance,
                                        elapsed: figures.elapsed, pace: nil, battery: level))
        run.batteryAlert = broadcastDeviceAlert(line, fullLine: line, of: entry)
    }

    /// The battery level coaches see on their other alerts (`batt=`), when the runner's phone reported one here.
    func batteryLevel(of runner: String) -> Double? {
        runners[runner]?.run?.battery?.level
    }

    /// True when a position must not be shown to those without the runner's share token: the runner has a
    /// privacy zone and the position is within it of the run's start, or the run has not gone past the zone yet,
    /// or there is no run to tell (an SOS before the first position).
    func isInPrivacyZone(_ point: Coordinate, of entry: RunnerEntry) -> Bool {
        let metres = entry.privacy.zone
        guard metres > 0 else { return false }
        guard let run = entry.run, let origin = run.zoneDelay?.origin, run.lastAnnounced.distance >= metres else {
            return true
        }
        return Geodesy.distance(from: origin, to: point) < metres
    }

    /// True when connection `id` sees a runner's positions as the runner does: the runner itself, or a holder of
    /// one of its live share tokens.
    func seesThroughZone(_ runner: String, _ id: ConnectionID) -> Bool {
        guard let session = sessions[id] else { return false }
        if session.name == runner { return true }
        guard let hash = session.grants[runner] else { return false }
        return shares[hash]?.runner == runner
    }

    /// Sends a phone's alert to everyone who may follow the runner here, at once and never droppable: `fullLine`
    /// to the runner and its share tokens' holders, `line` to the others. Numbered, remembered for resuming
    /// streams and relayed to other loops (both lines) like any broadcast.
    private func broadcastDeviceAlert(_ line: [UInt8], fullLine: [UInt8], of entry: RunnerEntry) -> DeviceAlertLines {
        let name = entry.name
        let sequence = sharedSequence?() ?? eventSequence + 1
        eventSequence = max(eventSequence, sequence)
        let begun = beginBroadcast(sequence)
        defer { endBroadcast(begun) }
        if entry.run != nil { keep(line, sequence: sequence, as: .event(about: name), inBacklogOf: name) }
        deliverDeviceAlert(line, fullLine: fullLine, about: name, own: entry.connection)
        if sharedSequence != nil {
            effects.relay(.event(RelayedEvent(runner: name, line: line, audience: .everyone, sequence: sequence,
                                             kind: .deviceAlert(fullLine: fullLine))))
        }
        return DeviceAlertLines(sequence: sequence, line: line, fullLine: fullLine)
    }

    /// Delivers a phone's alert to everyone here who may follow the runner (`own`: the runner's connection, if
    /// here): `fullLine` to the runner and its share tokens' holders, `line` to the others; never droppable.
    func deliverDeviceAlert(_ line: [UInt8], fullLine: [UInt8], about name: String, own: ConnectionID?) {
        var recipients: Set<ConnectionID> = []
        if let own { recipients.insert(own) }
        recipients.formUnion(watchers[name] ?? [])
        recipients.formUnion(everyoneWatchers)
        recipients.formUnion(coaches[name] ?? [])
        recipients.formUnion(everyoneCoaches)
        for id in recipients.sorted() where id == own || mayFollow(name, id) {
            send(line == fullLine || !seesThroughZone(name, id) ? line : fullLine, to: id, as: .event(about: name))
        }
    }

    /// A late follower of a live run here gets its latest SOS and battery alert at once, under the numbers they
    /// were broadcast with (so an event stream keeps them after its snapshot, and never shows them twice).
    func catchUpDeviceAlerts(_ id: ConnectionID, on name: String) {
        let alerts: [DeviceAlertLines?]
        if let run = runners[name]?.run {
            alerts = [run.sosAlert, run.batteryAlert]
        } else if let remote = remoteRuns[name] {
            alerts = [remote.sosAlert, remote.batteryAlert]
        } else {
            return
        }
        for alert in alerts.compactMap(\.self).sorted(by: { $0.sequence < $1.sequence }) {
            let begun = beginBroadcast(alert.sequence)
            send(seesThroughZone(name, id) ? alert.fullLine : alert.line, to: id, as: .event(about: name))
            endBroadcast(begun)
        }
    }
}

/// A phone's alert as broadcast: its event number, the line those without a share token got, and the whole one.
struct DeviceAlertLines {
    let sequence: UInt64
    let line: [UInt8]
    let fullLine: [UInt8]

    /// True for an `alert: kind=sos` (the others are the battery's).
    var isSOS: Bool { line.starts(with: Array("alert:".utf8)) && Self.contains(line, Array(" kind=sos ".utf8)) }

    private static func contains(_ line: [UInt8], _ part: [UInt8]) -> Bool {
        guard line.count >= part.count else { return false }
        return (0...(line.count - part.count)).contains { line[$0..<($0 + part.count)].elementsEqual(part) }
    }
}

extension RemoteRun {
    /// Keeps another loop's phone alert for late followers here.
    func keep(_ alert: DeviceAlertLines) {
        if alert.isSOS { sosAlert = alert } else { batteryAlert = alert }
    }
}

/// The alarms raised lately (runner, alarm, position timestamp), so a phone resending a position that carries
/// an alarm (its answer was lost) does not alert twice. Bounded: the oldest are forgotten first.
struct RecentAlarms {
    /// How many are remembered.
    static let capacity = 256
    private var stamps: [(runner: String, alarm: String, time: Double)] = []
    private var next = 0

    /// Remembers an alarm; false when it was raised already.
    mutating func insert(runner: String, alarm: String, at time: Double) -> Bool {
        if stamps.contains(where: { $0.time == time && $0.runner == runner && $0.alarm == alarm }) { return false }
        if stamps.count < Self.capacity {
            stamps.append((runner, alarm, time))
        } else {
            stamps[next] = (runner, alarm, time)
            next = (next + 1) % Self.capacity
        }
        return true
    }
}
