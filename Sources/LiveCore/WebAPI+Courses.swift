import HTTP
import RunCore
import RunStore
import Wire

/// The JSON of race courses (`course:NAME`): a course with its points and the runners on it now, and where one
/// runner is on its course. Made off the loop from what the loop copied (``CourseProgressView``).
extension WebAPI {
    /// At most this many vertices of a course's path are sent: a recorded track a point a metre is thinned to
    /// one every `length / maximumPathPoints` metres (the page draws it, and places runners by `along`).
    static let maximumPathPoints = 2_000

    /// `GET /api/courses/NAME`: `{"name","length","path":[[lat,lon,along],…],"points":[{"name","along","lat",
    /// "lon"}],"runners":[…]}`, `runners` the public live runners on it furthest first (``runnerJSON(_:)``); 404
    /// for a course the store does not have (or one that no longer builds). `known`: the course as the loop
    /// holds it (what its runners are matched against), else it is read from the store and built here.
    static func course(_ name: String, known: Course?, runners: [CourseProgressView],
                       store: any RunStore) throws(StoreError) -> HTTPResponse {
        let course: Course
        if let known {
            course = known
        } else {
            guard let stored = try store.course(named: name), let built = try? stored.course()
            else { return notFound("course", name) }
            course = built
        }
        var json = Array(#"{"name":"#.utf8)
        JSONSyntax.appendString(name, to: &json)
        json += Array(#","length":\#(metres(course.length)),"path":["#.utf8)
        for (index, vertex) in thinnedPath(course.distances, limit: maximumPathPoints).enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += Array("[\(degrees(course.coordinates[vertex].latitude)),\(degrees(course.coordinates[vertex].longitude)),\(metres(course.distances[vertex]))]".utf8)
        }
        json += Array(#"],"points":["#.utf8)
        for (index, point) in course.points.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            // Where the course passes it: the page draws it on the line (the file's marker may stand beside it).
            let spot = course.coordinate(at: point.along)
            json += Array(#"{"name":"#.utf8)
            JSONSyntax.appendString(point.name, to: &json)
            json += Array(#","along":\#(metres(point.along)),"lat":\#(degrees(spot.latitude)),"lon":\#(degrees(spot.longitude))}"#.utf8)
        }
        json += Array(#"],"runners":["#.utf8)
        for (index, runner) in runners.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += runnerJSON(runner)
        }
        json += Array("]}".utf8)
        return .json(json)
    }

    /// One runner of a course's `runners`: `{"runner","along","togo","eta","pace","elapsed","next_point",
    /// "next_point_eta","off_course"}` (`eta` the predicted finish, unix; `pace` the average moving pace along
    /// the course in seconds per km; the next point the first not passed yet; null where not known).
    static func runnerJSON(_ view: CourseProgressView) -> [UInt8] {
        var json = Array(#"{"runner":"#.utf8)
        JSONSyntax.appendString(view.runner, to: &json)
        json += Array(#","along":\#(metres(view.along)),"togo":\#(metres(view.togo)),"eta":\#(unix(view.eta))"#.utf8)
        json += Array(#","pace":\#(number(view.secondsPerMetre.map { $0 * 1000 }, decimals: 1))"#.utf8)
        json += Array(#","elapsed":\#(NumberFormat.string(view.elapsed, decimals: 1)),"next_point":"#.utf8)
        let next = view.nextPoint.map { CourseProgressView.Point(name: $0, along: 0, passed: nil, eta: view.nextPointETA) }
        if let next { JSONSyntax.appendString(next.name, to: &json) } else { json += Array("null".utf8) }
        json += Array(#","next_point_eta":\#(unix(next?.eta)),"off_course":\#(view.isOffCourse)}"#.utf8)
        return json
    }

    /// The `course` of `GET /api/runners/NAME`: null, or `{"name","along","togo","eta","off_course","points":
    /// [{"name","along","passed","eta"}]}` (every point of the course in order, `passed` when the runner passed
    /// it and `eta` when it should reach it, unix times or null).
    static func progressJSON(_ view: CourseProgressView?) -> [UInt8] {
        guard let view else { return Array("null".utf8) }
        var json = Array(#"{"name":"#.utf8)
        JSONSyntax.appendString(view.course, to: &json)
        json += Array(#","along":\#(metres(view.along)),"togo":\#(metres(view.togo)),"eta":\#(unix(view.eta))"#.utf8)
        json += Array(#","off_course":\#(view.isOffCourse),"points":["#.utf8)
        for (index, point) in view.points.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += Array(#"{"name":"#.utf8)
            JSONSyntax.appendString(point.name, to: &json)
            json += Array(#","along":\#(metres(point.along)),"passed":\#(unix(point.passed)),"eta":\#(unix(point.eta))}"#.utf8)
        }
        json += Array("]}".utf8)
        return json
    }

    /// The indices of the path's vertices to send: all of them up to `limit`; past it the first, each one at
    /// least `length / limit` metres along from the last kept, and the finish (so never more than `limit + 1`).
    static func thinnedPath(_ distances: [Double], limit: Int) -> [Int] {
        guard distances.count > limit, let length = distances.last else { return Array(distances.indices) }
        let spacing = length / Double(limit)
        var kept = [0]
        for index in distances.indices.dropFirst().dropLast() where distances[index] - distances[kept[kept.count - 1]] >= spacing {
            kept.append(index)
        }
        kept.append(distances.count - 1)
        return kept
    }

    /// Metres as the line protocol writes them (2 decimals).
    private static func metres(_ value: Double) -> String { NumberFormat.string(value, decimals: NumberFormat.distanceDecimals) }
    /// Degrees as the track's points have them (7 decimals).
    private static func degrees(_ value: Double) -> String { NumberFormat.string(value, decimals: 7) }
    /// A unix time in whole seconds, as `next_point_eta=` has it, or null.
    private static func unix(_ value: Double?) -> String { number(value, decimals: 0) }
    /// A number with `decimals` places, or null.
    private static func number(_ value: Double?, decimals: Int) -> String {
        value.map { NumberFormat.string($0, decimals: decimals) } ?? "null"
    }
}
