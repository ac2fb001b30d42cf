import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// `moonrunner course` as an organiser uses it: a route with aid stations, a correction, a bad file, removal.
@Suite(.mayBlock) struct CourseCommandTests {
    /// An out-and-back of 2 × 1 km north of Regent's Park, its aid station passed each way.
    static let route = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="organiser" xmlns="http://www.topografix.com/GPX/1/1">
        <wpt lat="51.5030" lon="-0.1200"><name>Aid 1</name></wpt>
        <wpt lat="51.5089" lon="-0.1200"><name>Turn</name></wpt>
        <wpt lat="51.5030" lon="-0.1200"><name>Aid 1</name></wpt>
        <rte><rtept lat="51.5000" lon="-0.1200"/><rtept lat="51.5090" lon="-0.1200"/><rtept lat="51.5000" lon="-0.1201"/></rte>
        </gpx>
        """

    func write(_ text: String, named name: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func addListReplaceAndRemoveACourse() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("runs.sqlite").path
        let file = try write(Self.route, named: "route.gpx", in: folder)
        let add = try ChildProcess(["course", "add", file, "--name", "park", "--db", database])
        #expect(add.awaitExit() == 0, "\(add.standardError)")
        #expect(add.standardOutput.hasPrefix("course park saved: 2.00 km, 3 points (its route)\n"), "\(add.standardOutput)")
        let lines = add.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.dropFirst() == ["  Aid 1     0.33 km", "  Turn      0.99 km", "  Aid 1     1.67 km", "  finish    2.00 km"],
                "\(lines)")
        let store = try SQLiteRunStore(path: database)
        let stored = try #require(try store.course(named: "park"))
        store.close()
        #expect(stored.path.count == 3 && stored.points.map(\.name) == ["Aid 1", "Turn", "Aid 1"])

        let again = try ChildProcess(["course", "add", file, "--name", "park", "--db", database])
        #expect(again.awaitExit() == 1)
        #expect(again.standardError.contains("a course named park exists: --replace to replace it"))
        let replaced = try ChildProcess(["course", "add", file, "--name", "park", "--replace", "--db", database])
        #expect(replaced.awaitExit() == 0)

        let list = try ChildProcess(["course", "list", "--db", database])
        #expect(list.awaitExit() == 0 && list.standardOutput == "park  2.00 km, 3 points\n", "\(list.standardOutput)")
        let remove = try ChildProcess(["course", "remove", "park", "--db", database])
        #expect(remove.awaitExit() == 0 && remove.standardOutput == "course park removed\n")
        let gone = try ChildProcess(["course", "remove", "park", "--db", database])
        #expect(gone.awaitExit() == 1 && gone.standardError.contains("no course named park"))
        let empty = try ChildProcess(["course", "list", "--db", database])
        #expect(empty.awaitExit() == 0 && empty.standardOutput.hasPrefix("no courses"))
    }

    @Test func aBadFileChangesNothingAndSaysWhy() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("runs.sqlite").path
        let far = try write(Self.route.replacingOccurrences(of: #"<wpt lat="51.5089" lon="-0.1200">"#,
                                                            with: #"<wpt lat="51.5089" lon="-0.1300">"#),
                            named: "far.gpx", in: folder)
        let refused = try ChildProcess(["course", "add", far, "--name", "park", "--db", database])
        #expect(refused.awaitExit() == 1)
        #expect(refused.standardError.contains("far.gpx: waypoint \"Turn\" is 694 m from the course at its nearest (at most 100 m)"),
                "\(refused.standardError)")
        let pathless = try write(#"<gpx xmlns="http://www.topografix.com/GPX/1/1"><wpt lat="1" lon="1"><name>A</name></wpt></gpx>"#,
                                 named: "points.gpx", in: folder)
        let noPath = try ChildProcess(["course", "add", pathless, "--name", "park", "--db", database])
        #expect(noPath.awaitExit() == 1 && noPath.standardError.contains("no route (<rte>) or track (<trk>)"))
        let badName = try ChildProcess(["course", "add", far, "--name", "no spaces", "--db", database])
        #expect(badName.awaitExit() == 2)
        let store = try SQLiteRunStore(path: database)
        defer { store.close() }
        #expect(try store.courses().isEmpty)
    }

    /// A race: `serve --course NAME` puts every run on the course; a runner may choose none.
    @Test func aRaceServerPutsEveryRunOnItsCourse() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("runs.sqlite").path
        let file = try write(Self.route, named: "route.gpx", in: folder)
        #expect(try ChildProcess(["course", "add", file, "--name", "park", "--db", database]).awaitExit() == 0)
        let missing = try ChildProcess(["serve", "--port", "0", "--http-port", "off", "--course", "berlin", "--db", database])
        #expect(missing.awaitExit() == 1)
        #expect(missing.standardError.contains("no course berlin in the database: moonrunner course add FILE --name berlin"))

        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "off", "--course", "park", "--db", database])
        defer { server.terminate() }
        let port = try server.listeningPort()
        let watcher = try TestClient(port: port)
        try watcher.send("watch:*")
        try watcher.expectNext("ok:watch")
        let ann = try TestClient(port: port), bob = try TestClient(port: port)
        for (client, name) in [(ann, "ann"), (bob, "bob")] {
            try client.send("iam:\(name)")
            try client.expectNext("ok:iam")
        }
        try bob.send("course:off")
        try bob.expectNext("ok:course cleared=yes")
        // Up the course's first leg, past the aid station at 333 m.
        let fixes = straightRun(count: 130, speed: 3)
        for line in fixes { try ann.send(line) }
        for line in fixes.prefix(20) { try bob.send(line) }
        let last = fixes.last!.split(separator: ",").last!
        let paces = try watcher.lines(until: "ann's last pace") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
        let annPace = try PaceEvent(line: try #require(paces.last))
        let course = try #require(annPace.course, "ann's run is on the race's course")
        #expect(abs(course.along - 387) < 20 && course.nextPoint == "Turn", "\(annPace.line)")
        #expect(paces.contains { $0.hasPrefix("point:ann name=\"Aid 1\" along=333.") }, "the aid station passed")
        #expect(paces.filter { $0.hasPrefix("pace:bob") }.allSatisfy { !$0.contains("along=") }, "bob declined")
    }
}
