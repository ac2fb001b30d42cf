import RunCore
import Wire

/// Positions from phone apps: one per request, or a batch (a queue sent at once), through the same engine,
/// store, badges and broadcast as `loc:` lines.
extension Hub {
    /// A request's positions for a runner the token proved, in time order (a batch's order is the app's; time
    /// order spares the run a measuring again). What became of each, in that order.
    package func placeDevicePositions(_ locations: [LocationCommand], for entry: RunnerEntry, now: Double) -> [FixPlacement] {
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
    package func committedSequence(ofRun runID: Int64) -> Int64? {
        guard let name = runOwners[runID], let run = runners[name]?.run, run.storedID == runID else { return nil }
        return run.committedSequence
    }
}
