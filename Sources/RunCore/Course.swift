import Foundation

/// A race course: a route or track as a polyline with the distance along it at every vertex, and its named
/// points in course order, each placed at the pass the file's order gives it.
///
/// Built from plain values (the GPX reader in RunStore hands over `<rtept>`/`<trkpt>` coordinates and the
/// `<wpt>`s), so RunCore stays free of I/O. The finish is the path's last point, implicitly.
///
/// Distances along the course are geodesic between vertices (``Geodesy/distance(from:to:)``); matching works in
/// a flat frame around the first vertex (``LocalProjection``), only to find the nearest point on a segment and
/// the fraction along it. The frame's scale error (~0.8% at 40 km from the origin) touches distances off the
/// course, not distances along it.
///
/// The path is used as given, but for repeated points (closer than ``repeatDistance``, a zero-length segment
/// has no direction): nothing is simplified, so a dense recorded track makes the matcher look at more segments
/// per metre of its window, never more because the course is longer.
public struct Course: Sendable {
    /// The course's name (the file's `<name>`, or the uploader's).
    public let name: String
    /// The polyline's vertices, start to finish.
    public let coordinates: [Coordinate]
    /// Metres along the course at each vertex: 0 at the start, ``length`` at the finish.
    public let distances: [Double]
    /// The named points in course order (their ``CoursePoint/along`` never decreases). The finish is not one.
    public private(set) var points: [CoursePoint] = []
    /// The vertices in the flat matching frame, metres east of the first vertex.
    let east: [Double]
    /// The vertices in the flat matching frame, metres north of the first vertex.
    let north: [Double]
    /// The flat matching frame.
    let projection: LocalProjection
    /// Per segment, what the search needs and would otherwise work out for every fix (a square root and three
    /// divisions a segment): its direction as a unit vector, 1 / its squared flat length, 1 / its length along.
    let segments: [SegmentShape]

    /// One segment's precomputed shape (see ``segments``).
    struct SegmentShape: Sendable, Hashable {
        /// East and north of the segment's direction, a unit vector (zero for a zero-length segment).
        var unitEast: Double, unitNorth: Double
        /// 1 / the squared flat length (0 for a zero-length segment).
        var inverseSquared: Double
        /// 1 / the metres along the course the segment spans.
        var inverseLength: Double
    }

    /// Consecutive path points closer than this (metres) are one point. Default 0.5.
    public static let repeatDistance = 0.5
    /// Shortest course accepted, metres: anything shorter is a mistake, not a race.
    public static let minimumLength = 100.0
    /// How near (metres) the course must come to a waypoint for the waypoint to be on it. Default 100: an aid
    /// station's marker often stands beside the road, never a block away.
    public static let waypointTolerance = 100.0
    /// Closest approaches this close (metres) to a stretch's nearest are passes, and waypoints this close are one
    /// spot (see ``init(name:path:waypoints:waypointTolerance:)``). Default 10.
    public static let waypointSlack = 10.0

    /// The course's length in metres.
    public var length: Double { distances[distances.count - 1] }

    /// Builds a course from a path and its waypoints in file order.
    ///
    /// Where a waypoint goes: the course *passes* a point at each closest approach within `waypointTolerance`
    /// (in a stretch of the course that near, every local minimum of the distance within ``waypointSlack`` of
    /// the stretch's nearest: a marker 30 m before an out-and-back's turn is passed on the way out and on the way
    /// back). A waypoint takes its first pass at or after the previous point's place (the first ever for the
    /// first); one listed again at the previous one's spot (within ``waypointSlack``) takes the pass after, so an
    /// out-and-back's aid station listed twice is placed on both legs, and shares the place when there is none.
    ///
    /// - Throws: ``CourseError`` naming the first problem: too few points, a bad coordinate, too short, or the
    ///   waypoint that is nowhere near the course or near it only before the previous one.
    public init(name: String, path: [Coordinate], waypoints: [(name: String, coordinate: Coordinate)] = [],
                waypointTolerance: Double = Course.waypointTolerance) throws(CourseError) {
        for (index, point) in path.enumerated() where !Self.isValid(point) {
            throw .invalidCoordinate(index: index)
        }
        var kept: [Coordinate] = [], distances: [Double] = []
        for point in path {
            guard let last = kept.last else {
                kept.append(point)
                distances.append(0)
                continue
            }
            let step = Geodesy.distance(from: last, to: point)
            guard step >= Self.repeatDistance else { continue }
            kept.append(point)
            distances.append(distances[distances.count - 1] + step)
        }
        guard kept.count >= 2 else { throw .tooFewPoints(count: kept.count) }
        guard let length = distances.last, length >= Self.minimumLength else {
            throw .tooShort(length: distances.last ?? 0, minimum: Self.minimumLength)
        }
        let projection = LocalProjection(origin: kept[0])
        var flat = kept.map(projection.project)
        // A recorded track has a vertex every few metres: the search would look at ten times the segments of
        // a planner's route for the same window. The geometry is thinned to within ``simplification`` of the
        // file's; the distance along stays the file's own at every vertex kept, so the length does not change.
        let thinned = Self.thinned(flat, tolerance: Self.simplification)
        if thinned.count < kept.count {
            kept = thinned.map { kept[$0] }
            distances = thinned.map { distances[$0] }
            flat = thinned.map { flat[$0] }
        }
        self.name = name
        self.coordinates = kept
        self.distances = distances
        self.projection = projection
        self.east = flat.map(\.east)
        self.north = flat.map(\.north)
        self.segments = (0..<(kept.count - 1)).map { index in
            let dx = flat[index + 1].east - flat[index].east, dy = flat[index + 1].north - flat[index].north
            let squared = dx * dx + dy * dy, length = squared.squareRoot()
            return SegmentShape(unitEast: length > 0 ? dx / length : 0, unitNorth: length > 0 ? dy / length : 0,
                                inverseSquared: squared > 0 ? 1 / squared : 0,
                                inverseLength: 1 / (distances[index + 1] - distances[index]))
        }
        points = try placing(waypoints, tolerance: waypointTolerance)
    }

    /// How far (metres) the thinned geometry the matcher searches may stray from the file's path. Default 0.5:
    /// well inside GPS noise, and a marathon recorded every 3 m keeps a vertex every 20-50 m on its bends.
    public static let simplification = 0.5

    /// The indices of the vertices Douglas–Peucker keeps within `tolerance` metres (flat frame), in order;
    /// iterative, so a long dense track cannot exhaust the stack.
    static func thinned(_ points: [(east: Double, north: Double)], tolerance: Double) -> [Int] {
        guard points.count > 2 else { return Array(points.indices) }
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true
        keep[points.count - 1] = true
        var stack = [(0, points.count - 1)]
        let limit = tolerance * tolerance
        while let (first, last) = stack.popLast() {
            guard last - first > 1 else { continue }
            let ax = points[first].east, ay = points[first].north
            let dx = points[last].east - ax, dy = points[last].north - ay
            let squared = dx * dx + dy * dy
            var farthest = first, farthestDistance = -1.0
            for index in (first + 1)..<last {
                let px = points[index].east - ax, py = points[index].north - ay
                let t = squared > 0 ? min(max((px * dx + py * dy) / squared, 0), 1) : 0
                let ex = px - t * dx, ey = py - t * dy
                let distance = ex * ex + ey * ey
                if distance > farthestDistance { (farthest, farthestDistance) = (index, distance) }
            }
            if farthestDistance > limit {
                keep[farthest] = true
                stack.append((first, farthest))
                stack.append((farthest, last))
            }
        }
        return keep.indices.filter { keep[$0] }
    }

    /// True for a latitude/longitude in range and finite.
    static func isValid(_ point: Coordinate) -> Bool {
        point.latitude.isFinite && point.longitude.isFinite && abs(point.latitude) <= 90 && abs(point.longitude) <= 180
    }

    /// The waypoints placed, in order, by the rule of ``init(name:path:waypoints:waypointTolerance:)``.
    private func placing(_ waypoints: [(name: String, coordinate: Coordinate)],
                         tolerance: Double) throws(CourseError) -> [CoursePoint] {
        var placed: [CoursePoint] = []
        for waypoint in waypoints {
            guard Self.isValid(waypoint.coordinate) else {
                throw .waypointOffCourse(name: waypoint.name, distance: .infinity, tolerance: tolerance)
            }
            let (east, north) = projection.project(waypoint.coordinate)
            let passes = self.passes(ofEast: east, north: north, tolerance: tolerance)
            guard !passes.isEmpty else {
                throw .waypointOffCourse(name: waypoint.name, distance: nearestApproach(east: east, north: north),
                                         tolerance: tolerance)
            }
            var along = 0.0
            if let previous = placed.last {
                let (previousEast, previousNorth) = projection.project(previous.coordinate)
                let repeated = hypot(east - previousEast, north - previousNorth) <= Self.waypointSlack
                // Listed again at the same spot: its next pass if the course has one, else the same place.
                let next = repeated ? passes.first { $0 > previous.along + Self.waypointSlack } : nil
                guard let pass = next ?? passes.first(where: { $0 >= previous.along - Self.waypointSlack }) else {
                    throw .waypointOutOfOrder(name: waypoint.name, after: previous.name)
                }
                along = max(pass, previous.along)
            } else {
                along = passes[0]
            }
            placed.append(CoursePoint(name: waypoint.name, coordinate: waypoint.coordinate, along: along,
                                      index: placed.count))
        }
        return placed
    }

    /// Metres along the course of each pass by a flat-frame point, in order: in every stretch of the course
    /// within `tolerance` of it, each closest approach (a local minimum of the distance along the course: a
    /// perpendicular foot inside a segment, or a vertex both its segments lead away from) within
    /// ``waypointSlack`` of the stretch's nearest. Minima, not segments: a route of a few long segments (an
    /// out-and-back is two) passes a spot once on each, however close the legs lie.
    private func passes(ofEast east: Double, north: Double, tolerance: Double) -> [Double] {
        var passes: [Double] = [], stretch: [(along: Double, distance: Double)] = []
        func close() {
            guard let nearest = stretch.map(\.distance).min() else { return }
            for place in stretch where place.distance <= nearest + Self.waypointSlack { passes.append(place.along) }
            stretch = []
        }
        // True when the previous segment's nearest point to the spot was its end vertex (this one's start).
        var previousEndsNearest = false
        let last = distances.count - 2
        for segment in 0...last {
            let dx = self.east[segment + 1] - self.east[segment], dy = self.north[segment + 1] - self.north[segment]
            let px = east - self.east[segment], py = north - self.north[segment]
            let squared = dx * dx + dy * dy
            let fraction = squared > 0 ? (px * dx + py * dy) / squared : 0
            let clamped = min(max(fraction, 0), 1)
            let distance = hypot(px - clamped * dx, py - clamped * dy)
            defer { previousEndsNearest = fraction >= 1 }
            guard distance <= tolerance else {
                close()
                continue
            }
            let isMinimum = fraction > 0 && fraction < 1 ? true
                : fraction <= 0 ? segment == 0 || previousEndsNearest
                : segment == last  // at the end vertex: the next segment decides, but the finish has none
            if isMinimum {
                stretch.append((distances[segment] + clamped * (distances[segment + 1] - distances[segment]), distance))
            }
        }
        close()
        return passes
    }

    /// The nearest the whole course comes to a flat-frame point, metres.
    private func nearestApproach(east: Double, north: Double) -> Double {
        (0..<(distances.count - 1)).map { nearest(east: east, north: north, segment: $0, from: 0, to: length).distance }
            .min() ?? .infinity
    }

    /// The nearest point to a flat-frame point on segment `segment`, kept within `lower...upper` metres along
    /// the course: its metres along and its distance (flat frame).
    func nearest(east: Double, north: Double, segment: Int, from lower: Double,
                 to upper: Double) -> (along: Double, distance: Double) {
        let startAlong = distances[segment], segmentLength = distances[segment + 1] - startAlong
        let shape = segments[segment]
        let dx = self.east[segment + 1] - self.east[segment], dy = self.north[segment + 1] - self.north[segment]
        let px = east - self.east[segment], py = north - self.north[segment]
        var fraction = (px * dx + py * dy) * shape.inverseSquared
        // Only the part of the segment inside the window counts.
        let low = max(0, (lower - startAlong) * shape.inverseLength)
        let high = min(1, (upper - startAlong) * shape.inverseLength)
        fraction = min(max(fraction, low), max(low, high))
        let ex = px - fraction * dx, ey = py - fraction * dy
        return (startAlong + fraction * segmentLength, (ex * ex + ey * ey).squareRoot())
    }

    /// The segment (index of its first vertex) holding `along`, searched from `hint` (cheap when close).
    func segment(containing along: Double, near hint: Int) -> Int {
        var segment = min(max(hint, 0), distances.count - 2)
        while segment > 0, distances[segment] > along { segment -= 1 }
        while segment < distances.count - 2, distances[segment + 1] <= along { segment += 1 }
        return segment
    }

    /// The point `along` metres along the course (clamped to the course), for maps and simulations.
    public func coordinate(at along: Double) -> Coordinate {
        let segment = segment(containing: along, near: binarySegment(along))
        let segmentLength = distances[segment + 1] - distances[segment]
        let fraction = min(max((along - distances[segment]) / segmentLength, 0), 1)
        return projection.coordinate(east: east[segment] + fraction * (east[segment + 1] - east[segment]),
                                     north: north[segment] + fraction * (north[segment + 1] - north[segment]))
    }

    /// A segment near `along` by bisection (for a look-up with no previous position to start from).
    private func binarySegment(_ along: Double) -> Int {
        var low = 0, high = distances.count - 1
        while high - low > 1 {
            let middle = (low + high) / 2
            if distances[middle] <= along { low = middle } else { high = middle }
        }
        return low
    }
}
