/// One smoothed position of a run's track with the measurements accumulated up to it.
struct TrackPoint: Sendable, Hashable {
    /// Smoothed position in the run's local frame, metres east and north of the first fix
    /// (``LocalProjection`` turns it back into a coordinate exactly).
    var east: Double, north: Double
    /// Unix time of the fix.
    var timestamp: Double
    /// The fix's reported accuracy, metres.
    var accuracy: Double
    /// True when the still/moving gate says the runner was moving here.
    var moving: Bool
    /// Distance from the start to here, metres.
    var distance: Double
    /// Moving time from the start to here, seconds.
    var movingTime: Double

    /// A point to be overwritten, for sizing storage.
    static let placeholder = TrackPoint(east: 0, north: 0, timestamp: 0, accuracy: 0, moving: false, distance: 0,
                                        movingTime: 0)

    /// The point as a fix, for the summary's track.
    func fix(in projection: LocalProjection) -> Fix {
        let coordinate = projection.coordinate(east: east, north: north)
        return Fix(latitude: coordinate.latitude, longitude: coordinate.longitude, accuracy: accuracy, timestamp: timestamp)
    }
}

/// Where and when a run passed a distance, interpolated inside the segment that crossed it.
struct Crossing: Sendable, Hashable {
    /// Unix time of the crossing.
    var timestamp: Double
    /// Position of the crossing in the run's local frame, metres.
    var east: Double, north: Double
}

/// A run's track seen as a sequence of points with non-decreasing cumulative distance.
protocol CumulativeTrack {
    /// Index of the first point that can be read (0, or later for a track that forgets its oldest points).
    var startIndex: Int { get }
    /// Number of points (one past the newest point's index).
    var pointCount: Int { get }
    /// The point at an index.
    func point(at index: Int) -> TrackPoint
}

extension CumulativeTrack {
    /// Every point can be read.
    var startIndex: Int { 0 }

    /// The crossing of `distance` metres, nil when the track does not reach it.
    func crossing(of distance: Double) -> Crossing? {
        guard pointCount > 0, point(at: pointCount - 1).distance >= distance else { return nil }
        // The first index whose distance >= target. A track that forgets keeps a point short of every distance
        // still searched for, so the search from its first kept point finds the same one.
        var low = startIndex, high = pointCount - 1
        while low < high {
            let mid = (low + high) / 2
            if point(at: mid).distance < distance { low = mid + 1 } else { high = mid }
        }
        let b = point(at: low)
        guard low > 0 else { return Crossing(timestamp: b.timestamp, east: b.east, north: b.north) }
        let a = point(at: low - 1)
        let fraction = (distance - a.distance) / (b.distance - a.distance)
        return Crossing(timestamp: a.timestamp + fraction * (b.timestamp - a.timestamp),
                        east: a.east + fraction * (b.east - a.east), north: a.north + fraction * (b.north - a.north))
    }

    /// The last index whose timestamp is at or before `timestamp`, nil when none.
    func lastIndex(atOrBefore timestamp: Double) -> Int? {
        var low = startIndex, high = pointCount  // first index whose timestamp > target
        while low < high {
            let mid = (low + high) / 2
            if point(at: mid).timestamp <= timestamp { low = mid + 1 } else { high = mid }
        }
        return low > 0 ? low - 1 : nil
    }
}
