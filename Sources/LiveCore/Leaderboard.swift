import Wire

/// The live runners ranked by distance (ties: the shorter elapsed time first). A fix only records the run's
/// figures (a dictionary write); the order is made once a tick (`rerank()`, one sort) and compared with the
/// previous one for the `rank:` events. Why not keep it sorted per fix: in a dense pack a fix can move a run
/// past hundreds of others, and the marathon benchmark (2,000 runners) doubled its latency doing so. Each loop
/// keeps one over every live run it knows (its own and, with several loops or nodes, the relayed ones).
/// Loop thread only.
package struct Leaderboard {
    /// One live run's figures.
    package struct Entry {
        let runner: String
        var distance: Double
        var elapsed: Double
        var moving: Double
        /// The goal distance the runner set (`goal:`), for `leaders:GOAL_M`.
        var goal: Double?
    }

    /// A runner whose place changed between two reranks: `from` nil when it has just joined the board. Places
    /// count from 1.
    struct Move: Hashable {
        let runner: String
        let from: Int?
        let to: Int
    }

    /// How many places the `rank:` events follow: a move is reported when its old or new place is within them
    /// (a run leaving moves everyone behind it up; for a 30,000-runner field nobody shows all that).
    let reportedPlaces: Int

    private var entries: [String: Entry] = [:]
    /// The order and places as of the last `rerank()` (0-based places).
    private var order: [String] = []
    private var places: [String: Int] = [:]

    init(reportedPlaces: Int = 100) {
        self.reportedPlaces = reportedPlaces
    }

    /// Runs on the board.
    var count: Int { entries.count }

    /// A run's new figures (a run not on the board joins it at the next rerank).
    mutating func update(_ runner: String, distance: Double, elapsed: Double, moving: Double, goal: Double?) {
        entries[runner] = Entry(runner: runner, distance: distance, elapsed: elapsed, moving: moving, goal: goal)
    }

    /// A run left the board.
    mutating func remove(_ runner: String) {
        entries[runner] = nil
    }

    /// The order now; the places that changed since the last rerank, within the reported places, best first.
    mutating func rerank() -> [Move] {
        let sorted = ranked(entries.values)
        var moved: [Move] = []
        var newPlaces: [String: Int] = [:]
        newPlaces.reserveCapacity(sorted.count)
        for (place, entry) in sorted.enumerated() {
            newPlaces[entry.runner] = place
            let before = places[entry.runner]
            guard before != place, min(before ?? place, place) < reportedPlaces else { continue }
            moved.append(Move(runner: entry.runner, from: before.map { $0 + 1 }, to: place + 1))
        }
        order = sorted.map(\.runner)
        places = newPlaces
        return moved
    }

    /// The place (from 1, as of the last rerank) and the figures now of a runner on the board.
    func standing(of runner: String) -> Standing? {
        guard let place = places[runner], let entry = entries[runner], let leaderName = order.first,
              let leader = entries[leaderName] else { return nil }
        return Self.standing(place + 1, of: entry, leader: leader)
    }

    /// The board now (only the runs with goal distance `goal` when given), best first, at most `limit`, and
    /// whether more were left out.
    package func standings(goal: Double?, limit: Int) -> (standings: [(String, Standing)], more: Bool) {
        let field = ranked(entries.values.filter { goal == nil || $0.goal == goal })
        guard let leader = field.first else { return ([], false) }
        let shown = field.prefix(limit).enumerated().map { ($1.runner, Self.standing($0 + 1, of: $1, leader: leader)) }
        return (shown, field.count > limit)
    }

    private func ranked(_ runs: some Sequence<Entry>) -> [Entry] {
        runs.sorted { a, b in
            if a.distance != b.distance { return a.distance > b.distance }
            if a.elapsed != b.elapsed { return a.elapsed < b.elapsed }
            return a.runner < b.runner  // a stable order for exact ties
        }
    }

    /// A place with its gap to `leader`: in metres, and in seconds at the leader's own average (moving) pace.
    private static func standing(_ position: Int, of entry: Entry, leader: Entry) -> Standing {
        let gap = max(0, leader.distance - entry.distance)
        let leaderPace = leader.distance > 0 && leader.moving > 0 ? leader.moving / leader.distance : nil
        return Standing(position: position, distance: entry.distance, elapsed: entry.elapsed, gap: gap,
                        gapTime: leaderPace.map { gap * $0 })
    }
}
