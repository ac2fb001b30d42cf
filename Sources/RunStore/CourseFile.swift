import Foundation
import RunCore

/// A race course read from the organiser's GPX file: the path of its first route (`<rte>`/`<rtept>`), or of its
/// first track (`<trk>`, every `<trkseg>` joined) when it has no route; and its named waypoints (`<wpt>` with a
/// `<name>`: aid stations, kilometre marks), in the file's order. Points need no time. A point without a valid
/// `lat`/`lon`, and a waypoint without a name, are skipped and counted.
public struct CourseFile: Sendable, Equatable {
    /// Where the path came from.
    public enum Source: String, Sendable { case route, track }

    /// The path, start to finish.
    public var path: [Coordinate]
    /// The named waypoints, in the file's order.
    public var points: [NamedPlace]
    /// Whether the path is the file's first route or its first track.
    public var source: Source
    /// Routes and tracks after the one used (a file with several: only the first counts).
    public var otherPaths: Int
    /// Path points and waypoints skipped: no valid position, or a waypoint without a name.
    public var skipped: Int

    /// Reads a GPX 1.0 or 1.1 document. Errors (kind ``StoreError/Kind/invalidInput``) say what is wrong, with
    /// the line where there is one.
    public static func read(_ data: Data) throws(StoreError) -> CourseFile {
        var reader = GPXCourseReader()
        try XMLEvents.parse(data, into: &reader)
        return try reader.finish()
    }
}

/// Turns XML events of a GPX document into a course.
struct GPXCourseReader: XMLEventHandler {
    private var sawGPX = false
    /// Local names of the open elements ("" for another namespace's).
    private var path: [String] = []
    private var routes: [[Coordinate]] = []
    private var tracks: [[Coordinate]] = []
    private var waypoints: [NamedPlace] = []
    private var waypoint: Coordinate?
    private var waypointName: String?
    private var skipped = 0

    mutating func start(_ element: XMLElementStart) throws(StoreError) {
        guard let parent = GPXReader.enter(element, path: &path) else { return }
        switch element.name {
        case "gpx" where parent == nil: sawGPX = true
        case "rte" where parent == "gpx" && path.count == 2: routes.append([])
        case "trk" where parent == "gpx" && path.count == 2: tracks.append([])
        case "rtept" where parent == "rte" && path.count == 3 && !routes.isEmpty:
            if let point = Self.position(element) { routes[routes.count - 1].append(point) } else { skipped += 1 }
        case "trkpt" where parent == "trkseg" && path.count == 4 && !tracks.isEmpty:
            if let point = Self.position(element) { tracks[tracks.count - 1].append(point) } else { skipped += 1 }
        case "wpt" where parent == "gpx" && path.count == 2:
            waypoint = Self.position(element)
            waypointName = nil
            if waypoint == nil { skipped += 1 }
        default: break
        }
    }

    mutating func end(_ name: String, namespace: String, text: String, line: Int) throws(StoreError) {
        guard let local = path.popLast(), !local.isEmpty else { return }
        let parent = path.last
        if local == "name", parent == "wpt", path.count == 2, !text.isEmpty {
            waypointName = text
        } else if local == "wpt", path.count == 1 {
            if let waypoint, let waypointName {
                waypoints.append(NamedPlace(name: waypointName, coordinate: waypoint))
            } else if waypoint != nil {
                skipped += 1
            }
            waypoint = nil
        }
    }

    /// A point's position: `lat` and `lon` as xsd:decimal, within range.
    private static func position(_ element: XMLElementStart) -> Coordinate? {
        guard let latitude = element.attributes["lat"].flatMap({ XMLNumber.value($0, exponent: false) }),
              let longitude = element.attributes["lon"].flatMap({ XMLNumber.value($0, exponent: false) }),
              abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// The course: the first route with two points or more, else the first such track.
    func finish() throws(StoreError) -> CourseFile {
        guard sawGPX else { throw StoreError.invalidInput("not a GPX document (no <gpx> element)") }
        let usable = { (paths: [[Coordinate]]) in paths.firstIndex { $0.count >= 2 } }
        if let index = usable(routes) {
            return CourseFile(path: routes[index], points: waypoints, source: .route,
                              otherPaths: routes.count - 1 + tracks.count, skipped: skipped)
        }
        if let index = usable(tracks) {
            return CourseFile(path: tracks[index], points: waypoints, source: .track,
                              otherPaths: routes.count + tracks.count - 1, skipped: skipped)
        }
        throw StoreError.invalidInput("no route (<rte>) or track (<trk>) with two points or more: a course needs its path")
    }
}
