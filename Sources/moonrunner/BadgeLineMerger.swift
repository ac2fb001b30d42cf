import MoonRunnerClient
import Wire

/// Folds the tiers one crossing wins (`earned`, `silver`, `gold`, `best` of one badge at one moment) into one
/// coach line: `ann won The Moon (silver, gold, best) at 1.61 km, 8:32`.
struct BadgeLineMerger {
    private var pending: [BadgeEvent] = []
    private var since = ContinuousClock.now

    /// Takes a badge; returns the line of the previous crossing when this one is another.
    mutating func add(_ badge: BadgeEvent, formatter: RunFormatter) -> String? {
        if let first = pending.first, first.runner == badge.runner, first.badgeID == badge.badgeID,
           first.timestamp == badge.timestamp {
            pending.append(badge)
            return nil
        }
        let line = flush(formatter: formatter)
        pending = [badge]
        since = .now
        return line
    }

    /// The pending crossing's line (and forgets it); with `olderThan`, only once it has waited that long.
    mutating func flush(olderThan age: Duration = .zero, formatter: RunFormatter) -> String? {
        guard let first = pending.first, ContinuousClock.now - since >= age else { return nil }
        let tiers = pending.map(\.tier).filter { $0 != "earned" }
        pending = []
        let title = tiers.isEmpty ? first.badgeName : "\(first.badgeName) (\(tiers.joined(separator: ", ")))"
        return "\(first.runner) won \(title) at \(formatter.distance(first.distance)), \(formatter.duration(first.elapsed))"
    }
}

/// A client's events, or a tick.
enum CoachInput: Sendable {
    case event(ClientEvent)
    case tick
}

/// `events` with a `.tick` every `interval`, in one stream (ends when `events` ends).
func merge(_ events: AsyncStream<ClientEvent>, ticks interval: Duration) -> AsyncStream<CoachInput> {
    AsyncStream { continuation in
        let forward = Task {
            for await event in events { continuation.yield(.event(event)) }
            continuation.finish()
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                continuation.yield(.tick)
            }
        }
        continuation.onTermination = { _ in
            forward.cancel()
            ticker.cancel()
        }
    }
}
