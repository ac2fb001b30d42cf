import RunCore
import RunStore

/// A privacy zone (`privacy:METRES`): what everyone but the runner sees of where a run went. Nothing of the
/// first METRES, nothing of the last METRES: a point is hidden when it is within METRES of either end along the
/// track, or as the crow flies (GPS noise while standing at the door adds track distance without moving away).
/// Live, where the run will end is not known yet, so others see positions METRES late: by the time the run
/// ends, its last METRES have never been shown.
package struct PrivacyZone: Sendable {
    /// Metres hidden at each end (> 0).
    let metres: Double

    /// The positions of one live run as others see them. Keeps the points of the last METRES and a little more
    /// (one per metre run at most), so its memory is bounded by the zone, not the run.
    struct Delay {
        let zone: PrivacyZone
        private var points: [(distance: Double, coordinate: Coordinate)] = []
        private var head = 0
        private var start: Coordinate?

        init(_ zone: PrivacyZone) { self.zone = zone }

        /// The run's first position since the zone applies: the centre of the zone at its start.
        var origin: Coordinate? { start }

        /// The run is at `coordinate`, `distance` metres in: the position others may see now, if any.
        mutating func shown(_ coordinate: Coordinate, at distance: Double) -> Coordinate? {
            if start == nil { start = coordinate }
            if points.last.map({ distance >= $0.distance + 1 }) ?? true { points.append((distance, coordinate)) }
            let late = distance - zone.metres
            guard late >= zone.metres else { return nil }
            while head + 1 < points.count, points[head + 1].distance <= late { head += 1 }
            if head > 512 {
                points.removeFirst(head)
                head = 0
            }
            guard points[head].distance <= late, let start,
                  Geodesy.distance(from: start, to: points[head].coordinate) >= zone.metres else { return nil }
            return points[head].coordinate
        }
    }

    /// The stored fixes others may see (accepted ones measured along, refused ones kept between them).
    package func trim(_ fixes: [StoredFix]) -> [StoredFix] {
        let accepted = fixes.filter(\.isAccepted)
        let shown = visible(accepted.map(\.fix.coordinate))
        guard let first = shown.firstIndex(of: true), let last = shown.lastIndex(of: true) else { return [] }
        let from = accepted[first].sequence, to = accepted[last].sequence
        // Between the first and last shown accepted fixes: the refused ones too, but no accepted one in a zone.
        return fixes.filter { fix in
            guard (from...to).contains(fix.sequence) else { return false }
            guard fix.isAccepted, let index = accepted.firstIndex(where: { $0.sequence == fix.sequence }) else {
                return !fix.isAccepted && !hides(fix.fix.coordinate, near: [accepted[0].fix.coordinate,
                                                                           accepted[accepted.count - 1].fix.coordinate])
            }
            return shown[index]
        }
    }

    /// Whether a point `distance` metres into a run of `total` metres is in the zone along the track.
    package func hides(_ distance: Double, of total: Double) -> Bool {
        distance < metres || distance > total - metres
    }

    /// Whether a point is within the zone's radius of any of `ends`.
    package func hides(_ point: Coordinate, near ends: [Coordinate]) -> Bool {
        ends.contains { Geodesy.distance(from: $0, to: point) < metres }
    }

    /// For each point of a track: whether others may see it.
    package func visible(_ points: [Coordinate]) -> [Bool] {
        guard let first = points.first, let last = points.last else { return [] }
        let along = Self.distances(points)
        let total = along[along.count - 1]
        return points.indices.map { !hides(along[$0], of: total) && !hides(points[$0], near: [first, last]) }
    }

    private static func distances(_ points: [Coordinate]) -> [Double] {
        var along: [Double] = []
        along.reserveCapacity(points.count)
        var total = 0.0
        for (index, point) in points.enumerated() {
            if index > 0 { total += Geodesy.distance(from: points[index - 1], to: point) }
            along.append(total)
        }
        return along
    }
}

extension PrivacyZone {
    /// The zone of a runner's settings; nil for none.
    package init?(_ privacy: RunnerPrivacy) {
        guard privacy.zone > 0 else { return nil }
        self.init(metres: privacy.zone)
    }
}
