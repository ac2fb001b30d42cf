import Wire

/// The live runners ranked by distance (ties: the shorter elapsed time first), kept in order as paces arrive so
/// a fix costs a step or two of a sorted array, not a sort. Each loop keeps one over every live run it knows
/// (its own and, with several loops or nodes, the relayed ones). Loop thread only.
struct Leaderboard {
    /// One live run's figures.
    struct Entry {
        let runner: String
        var distance: Double
        var elapsed: Double
        var moving: Double
        /// The goal distance the runner set (`goal:`), for `leaders:GOAL_M`.
        var goal: Double?
    }

    /// A runner whose place changed: `from` nil when it has just joined the board. Places count from 1.
    struct Move: Hashable {
        let runner: String
        let from: Int?
        let to: Int
    }

    /// How many places the `rank:` events follow: a move is reported when its old or new place is within them.
    /// Why a bound: a run leaving the board moves everyone behind it up one place, and announcing that for a
    /// 30,000-runner field to every `watch:*` spectator at each finish would flood them for nothing anyone shows.
    let reportedPlaces: Int

    private(set) var order: [Entry] = []
    private var places: [String: Int] = [:]

    init(reportedPlaces: Int = 100) {
        self.reportedPlaces = reportedPlaces
    }

    /// Runs on the board.
    var count: Int { order.count }

    /// A run's new figures (a run not on the board joins it); the places that changed, within the reported ones.
    /// Nothing is allocated unless places change (this runs for every fix).
    mutating func update(_ runner: String, distance: Double, elapsed: Double, moving: Double, goal: Double?) -> [Move] {
        let from = places[runner]
        var index: Int
        if let from {
            index = from
            order[index].distance = distance
            order[index].elapsed = elapsed
            order[index].moving = moving
            order[index].goal = goal
        } else {
            index = order.count
            order.append(Entry(runner: runner, distance: distance, elapsed: elapsed, moving: moving, goal: goal))
            places[runner] = index
        }
        // Each runner passed moves one place the other way (a run only bubbles one way per update).
        var moved: [Move] = []
        while index > 0, Self.precedes(order[index], order[index - 1]) {
            order.swapAt(index, index - 1)
            places[order[index].runner] = index
            if index - 1 < reportedPlaces { moved.append(Move(runner: order[index].runner, from: index, to: index + 1)) }
            index -= 1
        }
        while index + 1 < order.count, Self.precedes(order[index + 1], order[index]) {
            order.swapAt(index, index + 1)
            places[order[index].runner] = index
            if index < reportedPlaces { moved.append(Move(runner: order[index].runner, from: index + 2, to: index + 1)) }
            index += 1
        }
        places[runner] = index
        if from != index, min(from ?? index, index) < reportedPlaces {
            moved.append(Move(runner: runner, from: from.map { $0 + 1 }, to: index + 1))
        }
        return moved
    }

    /// A run left the board (ended); everyone behind moves up a place (reported within the reported places).
    mutating func remove(_ runner: String) -> [Move] {
        guard let index = places.removeValue(forKey: runner) else { return [] }
        order.remove(at: index)
        var moved: [Move] = []
        for place in index..<order.count {
            places[order[place].runner] = place
            if place < reportedPlaces { moved.append(Move(runner: order[place].runner, from: place + 2, to: place + 1)) }
        }
        return moved
    }

    /// The place (from 1) and standing of a runner on the board.
    func standing(of runner: String) -> Standing? {
        places[runner].map { standing(at: $0, in: order) }
    }

    /// The board (only the runs with goal distance `goal` when given), best first, at most `limit`, and whether
    /// more were left out.
    func standings(goal: Double?, limit: Int) -> (standings: [(String, Standing)], more: Bool) {
        let field = goal.map { goal in order.filter { $0.goal == goal } } ?? order
        let shown = field.prefix(limit).indices.map { (field[$0].runner, standing(at: $0, in: field)) }
        return (shown, field.count > limit)
    }

    /// The standing at `index` of `field`, its gap measured to `field`'s first.
    private func standing(at index: Int, in field: [Entry]) -> Standing {
        let entry = field[index]
        let leader = field[0]
        let gap = max(0, leader.distance - entry.distance)
        // The gap in time at the leader's own average (moving) pace.
        let leaderPace = leader.distance > 0 && leader.moving > 0 ? leader.moving / leader.distance : nil
        return Standing(position: index + 1, distance: entry.distance, elapsed: entry.elapsed, gap: gap,
                        gapTime: leaderPace.map { gap * $0 })
    }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.distance > b.distance || (a.distance == b.distance && a.elapsed < b.elapsed)
    }
}
