import ToolSupport
import Foundation
import RunCore
import RunStore
import Wire

let courseHelp = """
usage: moonrunner course add FILE --name NAME [--replace] [--db PATH|URL]
       moonrunner course list [--db PATH|URL]
       moonrunner course remove NAME [--db PATH|URL]

A race course is the organiser's GPX file: its route (<rte>), or its track (<trk>) when it has no route, and
its named waypoints (<wpt> with a <name>: aid stations, kilometre marks) in course order; the finish is the
path's end. A waypoint is placed where the course passes it, in the file's order: on an out-and-back, an aid
station listed twice is on both legs. Courses are stored in the database beside the runs (a running server
finds a new one the first time a runner asks for it).

  add FILE      stores the course and prints its length and points; a waypoint more than 100 m from the
                course, or out of course order, is refused with its name
  --name NAME   the course's name (1-32 of A-Z a-z 0-9 _ . -), what runners give to course:NAME
  --replace     replaces a course of that name (without it, an existing name is refused)
  list          every course: name, length, points
  remove NAME   forgets the course
  --db PATH|URL SQLite file (default moonrunner.sqlite) or postgres://… URL
"""

/// `moonrunner course add|list|remove …` (`arguments` are the words after `course`).
func runCourseCommand(arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") || arguments.isEmpty {
        print(courseHelp)
        return arguments.isEmpty ? 2 : 0
    }
    let action = arguments[0]
    let location: String, name: String?, file: String?, replace: Bool
    do {
        var options = try Options(Array(arguments.dropFirst()), switches: ["replace"])
        location = options.string("db") ?? StoreDefaults.path
        switch action {
        case "add":
            let given = options.string("name")
            replace = options.flag("replace")
            try options.finish()
            guard options.positional.count == 1 else { throw Options.UsageError(description: "give one GPX file") }
            guard let given else { throw Options.UsageError(description: "--name NAME is required") }
            guard Command.isValidName(given) else {
                throw Options.UsageError(description: "--name \(given) is not a course name: 1-32 of A-Z a-z 0-9 _ . -")
            }
            (name, file) = (given, options.positional[0])
        case "list":
            try options.finish()
            guard options.positional.isEmpty else { throw Options.UsageError(description: "list takes no name") }
            (name, file, replace) = (nil, nil, false)
        case "remove":
            try options.finish()
            guard options.positional.count == 1 else { throw Options.UsageError(description: "give the course's name") }
            (name, file, replace) = (options.positional[0], nil, false)
        default:
            throw Options.UsageError(description: "unknown action '\(action)': add, list or remove")
        }
    } catch {
        printError("moonrunner course: \(error)\n\n\(courseHelp)")
        return 2
    }
    return withStore(for: "course", { () throws(StoreError) in try openStore(at: location) }) { store in
        do {
            switch action {
            case "add": return try addCourse(from: file ?? "", named: name ?? "", replacing: replace, into: store)
            case "list": return try listCourses(in: store)
            default: return try removeCourse(named: name ?? "", from: store)
            }
        } catch let problem as FileAccess.Problem {
            printError("moonrunner course: \(problem)")
        } catch let problem as CourseError {
            printError("moonrunner course: \(file ?? ""): \(problem)")
        } catch {
            printError("moonrunner course: \(file.map { "\($0): " } ?? "")\(error)")
        }
        return 1
    }
}

/// Reads, checks and stores a course; prints what it is.
private func addCourse(from file: String, named name: String, replacing: Bool, into store: any RunStore) throws -> Int32 {
    let read = try CourseFile.read(try FileAccess.read(file))
    let course = try Course(name: name, path: read.path, waypoints: read.points.map { ($0.name, $0.coordinate) })
    if !replacing, try store.course(named: name) != nil {
        printError("moonrunner course: a course named \(name) exists: --replace to replace it")
        return 1
    }
    store.submit(.course(StoredCourse(name: name, path: read.path, points: read.points,
                                      created: Date().timeIntervalSince1970)))
    try store.flushCommitted()
    var heading = String(format: "course %@ saved: %.2f km, %d %@", name, course.length / 1000, course.points.count,
                         course.points.count == 1 ? "point" : "points")
    heading += " (its \(read.source.rawValue)"
    if read.otherPaths > 0 { heading += "; \(read.otherPaths) more in the file, not used" }
    if read.skipped > 0 { heading += "; \(read.skipped) points skipped: no position, or a waypoint without a name" }
    print(heading + ")")
    let width = max(course.points.map(\.name.count).max() ?? 0, "finish".count)
    for point in course.points {
        print("  " + point.name.padding(toLength: width, withPad: " ", startingAt: 0)
            + String(format: "  %6.2f km", point.along / 1000))
    }
    print("  " + "finish".padding(toLength: width, withPad: " ", startingAt: 0)
        + String(format: "  %6.2f km", course.length / 1000))
    return 0
}

/// Prints every course, a line each.
private func listCourses(in store: any RunStore) throws -> Int32 {
    let courses = try store.courses()
    guard !courses.isEmpty else {
        print("no courses: moonrunner course add FILE --name NAME")
        return 0
    }
    let width = courses.map(\.name.count).max() ?? 0
    for stored in courses {
        let points = stored.points.count == 1 ? "1 point" : "\(stored.points.count) points"
        // A stored course is one `add` accepted: rebuilt here only to measure it.
        let length = (try? stored.course())
            .map { String(format: "%.2f km", $0.length / 1000) } ?? "unreadable"
        print(stored.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(length), \(points)")
    }
    return 0
}

/// Forgets a course; says so only once it is gone from the database.
private func removeCourse(named name: String, from store: any RunStore) throws -> Int32 {
    guard try store.course(named: name) != nil else {
        printError("moonrunner course: no course named \(name)")
        return 1
    }
    store.submit(.removeCourse(name: name))
    try store.flushCommitted()
    print("course \(name) removed")
    return 0
}
