/// Why a ``Course`` could not be built from a route: each case names what to fix in the file.
public enum CourseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than two distinct points on the path (a route needs a start and a finish).
    case tooFewPoints(count: Int)
    /// The path's point at `index` (0-based, in file order) has a latitude or longitude out of range or not a number.
    case invalidCoordinate(index: Int)
    /// The path is shorter than `minimum` metres: `length` is what it measures.
    case tooShort(length: Double, minimum: Double)
    /// The waypoint's nearest approach to the whole course is `distance` metres, more than the tolerance.
    case waypointOffCourse(name: String, distance: Double, tolerance: Double)
    /// The waypoint is near the course only before `after`'s place: out of order in the file.
    case waypointOutOfOrder(name: String, after: String)

    /// A sentence for the person who uploaded the file.
    public var description: String {
        switch self {
        case .tooFewPoints(let count):
            "a course needs at least 2 distinct points; the route has \(count)"
        case .invalidCoordinate(let index):
            "point \(index + 1) of the route is not a valid latitude/longitude"
        case .tooShort(let length, let minimum):
            "the course is \(Int(length.rounded())) m long; at least \(Int(minimum)) m are needed"
        case .waypointOffCourse(let name, let distance, let tolerance):
            "waypoint \"\(name)\" is \(Int(distance.rounded())) m from the course at its nearest (at most \(Int(tolerance)) m)"
        case .waypointOutOfOrder(let name, let after):
            "waypoint \"\(name)\" is on the course only before \"\(after)\": waypoints must be in course order"
        }
    }
}
