import RunCore
import RunStore
import Wire

/// One position a phone app sent (decoded from its request by the web side), with what the app said beside it.
package struct DevicePosition: Equatable, Sendable {
    /// The fix (timestamp text: the unix seconds as a plain decimal).
    package var location: LocationCommand
    /// True when the app gave no time and the position carries the time of receipt (as Traccar's server does).
    package var stampedOnReceipt = false
    /// The alarm the app raised with this position, lowercased (`sos`, …); nil for none.
    package var alarm: String?
    /// The phone's battery level in percent (0...100), when the app sent it.
    package var battery: Double?

    package init(location: LocationCommand, stampedOnReceipt: Bool = false, alarm: String? = nil, battery: Double? = nil) {
        self.location = location
        self.stampedOnReceipt = stampedOnReceipt
        self.alarm = alarm
        self.battery = battery
    }
}

/// What a phone app's request of positions gets: 200 (`taken`) once every position in it that was recorded is
/// on disk, as `ack:` is, so the app's own retry queue and the store lose nothing between them; `storageFailing`
/// (503) when storing failed, so the app sends it all again (what was stored is recognised). A request whose
/// positions were all refused before a run started is answered at once: retrying would not help.
package enum PhoneAnswer: Equatable, Sendable {
    case taken
    case storageFailing
}

/// A phone's request whose answer waits for run `runID`'s fixes up to `sequence` to be on disk.
struct PendingPhoneAnswer {
    let connection: ConnectionID
    let sequence: Int64
    /// How the answer is written.
    let format: Hub.PhoneFormat
}

/// Positions from phone apps: one per request, or a batch (a queue sent at once), through the same engine,
/// store, badges and broadcast as `loc:` lines.
extension Hub {
    /// One request's positions from the phone of device token `token` (the driver checked it names `entry`'s
    /// runner): the phone is noted (app, battery), an alarm raised first (an SOS is never held behind the
    /// positions it came with), the positions placed in time order; then the request is answered
    /// (its HTTP response in `format`) at once or once its positions are on disk (``committed(_:)``).
    package func phonePositions(_ positions: [DevicePosition], token: String, app: String, for entry: RunnerEntry,
                                from id: ConnectionID, now: Double, format: PhoneFormat = .osmAnd) {
        assertOnLoop()
        let battery = positions.filter { $0.battery != nil }.max { $0.location.timestamp < $1.location.timestamp }
        deviceReported(token: token, runner: entry.name, app: app, battery: battery?.battery, now: now)
        for position in positions {
            if let alarm = position.alarm { raiseAlarm(alarm, at: position.location, for: entry, now: now) }
        }
        let placements = placeDevicePositions(positions.map(\.location), for: entry, now: now)
        if let battery, let level = battery.battery {
            noteBattery(level, at: battery.location.timestamp, for: entry, now: now)
        }
        if placements.contains(.failed) { return answerPhone(id, .storageFailing, format: format) }
        var waiting: (runID: Int64, sequence: Int64)?
        for case .recorded(let runID, let sequence) in placements where sequence > waiting?.sequence ?? 0 {
            waiting = (runID, sequence)
        }
        guard let waiting, waiting.sequence > committedSequence(ofRun: waiting.runID) ?? .max else {
            return answerPhone(id, .taken, format: format)
        }
        pendingPhoneAnswers[waiting.runID, default: []].append(
            PendingPhoneAnswer(connection: id, sequence: waiting.sequence, format: format))
    }

    /// A batch reached the disk (or failed): the phones whose positions it covers get their answer. A failure
    /// first: a request with a write that was not stored is never answered `taken`.
    func answerPhones(after receipt: CommitReceipt) {
        guard !pendingPhoneAnswers.isEmpty else { return }
        for runID in receipt.affectedRuns {
            for answer in pendingPhoneAnswers.removeValue(forKey: runID) ?? [] {
                answerPhone(answer.connection, .storageFailing, format: answer.format)
            }
        }
        for (runID, committed) in receipt.committedSequences {
            guard let waiting = pendingPhoneAnswers[runID] else { continue }
            let (done, left) = (waiting.filter { $0.sequence <= committed }, waiting.filter { $0.sequence > committed })
            pendingPhoneAnswers[runID] = left.isEmpty ? nil : left
            for answer in done { answerPhone(answer.connection, .taken, format: answer.format) }
        }
    }

    /// A phone's request answered, as its app expects.
    private func answerPhone(_ id: ConnectionID, _ answer: PhoneAnswer, format: PhoneFormat) {
        effects.respond(id, answer.response(for: format))
    }

    /// A request's positions for a runner the token proved, in time order (a batch's order is the app's; time
    /// order spares the run a measuring again). What became of each, in that order.
    func placeDevicePositions(_ locations: [LocationCommand], for entry: RunnerEntry, now: Double) -> [FixPlacement] {
        let ordered = locations.count < 2 ? locations
            : locations.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }
                .map(\.element)
        var placements: [FixPlacement] = []
        placements.reserveCapacity(ordered.count)
        for location in ordered {
            let placement = place(location, for: entry, replyTo: nil, now: now, fromDevice: true)
            placements.append(placement)
            if placement == .failed { break }  // the store is failing: the app sends them all again
        }
        if let run = entry.run {
            run.lastDeviceFixAt = now
            run.disconnectedAt = nil  // the app is its connection now (a recovered run continues)
        }
        return placements
    }

    /// The highest fix sequence of run `runID` on disk, nil when the run is not this loop's live run.
    func committedSequence(ofRun runID: Int64) -> Int64? {
        guard let name = runOwners[runID], let run = runners[name]?.run, run.storedID == runID else { return nil }
        return run.committedSequence
    }
}
