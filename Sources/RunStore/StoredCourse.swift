import RunCore

/// A race course as stored (`moonrunner course add`): the path a runner follows and its named points (aid
/// stations, kilometre marks), as read from the organiser's GPX file; the finish is the path's end. Where each
/// point lies along the course is the engine's to work out (`Course` in RunCore), from these.
public struct StoredCourse: Sendable, Hashable {
    /// The course's name (as a runner's: 1-32 of A-Z a-z 0-9 _ . -).
    public var name: String
    /// The path, in order, start to finish.
    public var path: [Coordinate]
    /// The named points, in the file's order (an out-and-back passes a spot twice: the order says which pass).
    public var points: [NamedPlace]
    /// When it was stored (unix seconds).
    public var created: Double

    /// Creates a course record.
    public init(name: String, path: [Coordinate], points: [NamedPlace], created: Double) {
        self.name = name
        self.path = path
        self.points = points
        self.created = created
    }
}

/// A named spot: a GPX `<wpt>` with its `<name>`.
public struct NamedPlace: Sendable, Hashable, Codable {
    /// The name as written in the file.
    public var name: String
    /// Where it is.
    public var coordinate: Coordinate

    /// Creates a named place.
    public init(name: String, coordinate: Coordinate) {
        self.name = name
        self.coordinate = coordinate
    }

    /// `{"name": …, "lat": …, "lon": …}`, as the database's JSON column holds it.
    private enum CodingKeys: String, CodingKey { case name, lat, lon }

    /// Reads `{"name", "lat", "lon"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        coordinate = Coordinate(latitude: try container.decode(Double.self, forKey: .lat),
                                longitude: try container.decode(Double.self, forKey: .lon))
    }

    /// Writes `{"name", "lat", "lon"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(coordinate.latitude, forKey: .lat)
        try container.encode(coordinate.longitude, forKey: .lon)
    }
}

extension StoredCourse {
    /// The engine's course (points placed along it), as `course add` checked it.
    public func course() throws(CourseError) -> Course {
        try Course(name: name, path: path, waypoints: points.map { ($0.name, $0.coordinate) })
    }

    /// The path as the database's JSON column holds it: `[[lat, lon], …]`.
    package var pathJSON: [[Double]] { path.map { [$0.latitude, $0.longitude] } }

    /// The path from its JSON column; `context` names the course in an error.
    package static func path(fromJSON rows: [[Double]], context: String) throws(StoreError) -> [Coordinate] {
        var path: [Coordinate] = []
        path.reserveCapacity(rows.count)
        for row in rows {
            guard row.count == 2 else { throw StoreError(.corrupt, "\(context): a path point is not [lat, lon]") }
            path.append(Coordinate(latitude: row[0], longitude: row[1]))
        }
        return path
    }
}
