@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// Courses on HTTP (issue 29): `GET /api/courses/NAME` (the course, its points, the public runners on it
/// furthest first) and the `course` of `GET /api/runners/NAME`, through a real server whose store holds the
/// course as `moonrunner course add` leaves it; and protocol.md's examples of both have the server's keys.
@Suite struct CourseWebTests {
    /// `north` metres north of (51.5, -0.12), where `straightRun` starts.
    static func at(_ north: Double) -> Coordinate { Coordinate(latitude: 51.5 + north / 111_229, longitude: -0.12) }

    /// 2 km straight north with Aid 1 at 300 m and Aid 2 at 1500 m.
    static let park = StoredCourse(name: "park", path: [at(0), at(1000), at(2000)],
                                   points: [NamedPlace(name: "Aid 1", coordinate: at(300)),
                                            NamedPlace(name: "Aid 2", coordinate: at(1500))], created: 1)

    /// The JSON object at `path` on `client`, with its status.
    static func object(_ client: PureWebClient, _ path: String) throws -> (Int, [String: Any]) {
        let response = try client.get(path)
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, object)
    }

    /// A server whose store has `park` and `quiet` (which nobody runs); ann on `park` 150 s at 3 m/s (past Aid 1),
    /// bob private on it, cat running with no course. The body gets an HTTP client and ann's first fix's time.
    static func withRunnersOnPark(_ body: @escaping @Sendable (PureWebClient, Double) throws -> Void) async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            store.submit(.course(park))
            store.submit(.course(StoredCourse(name: "quiet", path: [at(0), at(500)], points: [], created: 2)))
            try withPureServer(store: store) { server in
                let start = Date().timeIntervalSince1970.rounded(.down) - 150
                let (ann, _) = try connectRunner("ann", to: server)
                try ann.send("course:park")
                try ann.expect("ok:course name=park")
                let (bob, _) = try connectRunner("bob", to: server)
                for line in ["private:on", "course:park"] { try bob.send(line) }
                try bob.expect("ok:course name=park")
                let (cat, _) = try connectRunner("cat", to: server)
                for (client, name, count) in [(ann, "ann", 150), (bob, "bob", 60), (cat, "cat", 10)] {
                    let lines = straightRun(count: count, from: start, speed: 3)
                    for line in lines { try client.send(line) }
                    try client.expect("ack:\(name) ts=\(lines.last!.split(separator: ",").last!)", timeout: 20)
                }
                let client = server.web()
                try body(client, start)
            }
        }
    }

    @Test func aCoursesJSONHasItsPathPointsAndTheRunnersOnItFurthestFirst() async throws {
        try await Self.withRunnersOnPark { client, start in
            let (status, course) = try Self.object(client, "/api/courses/park")
            #expect(status == 200)
            #expect(course["name"] as? String == "park" && abs((course["length"] as? Double ?? 0) - 2000) < 5, "\(course)")
            let path = try #require(course["path"] as? [[Double]])
            // Straight north: the middle vertex adds nothing the matcher needs (the course is thinned within
            // half a metre), so the start and the finish remain.
            #expect(path.count == 2 && path.allSatisfy { $0.count == 3 }, "\(path)")
            #expect(path.first?[2] == 0 && abs((path.last?[2] ?? 0) - 2000) < 5 && abs((path.last?[0] ?? 0) - 51.5179811) < 1e-6)
            let points = try #require(course["points"] as? [[String: Any]])
            try #require(points.map { $0["name"] as? String } == ["Aid 1", "Aid 2"], "\(points)")
            #expect(abs((points[0]["along"] as? Double ?? 0) - 300) < 1 && abs((points[1]["along"] as? Double ?? 0) - 1500) < 1)
            #expect(abs((points[0]["lat"] as? Double ?? 0) - Self.at(300).latitude) < 1e-5, "on the course: \(points[0])")
            // The private bob is not listed; cat follows no course.
            let runners = try #require(course["runners"] as? [[String: Any]])
            #expect(runners.map { $0["runner"] as? String } == ["ann"], "\(runners)")
            let ann = try #require(runners.first)
            let along = ann["along"] as? Double ?? 0, togo = ann["togo"] as? Double ?? 0
            #expect(abs(along - 447) < 25 && abs(along + togo - 2000) < 5, "\(ann)")
            #expect(ann["next_point"] as? String == "Aid 2" && ann["off_course"] as? Bool == false)
            #expect(abs((ann["pace"] as? Double ?? 0) - 333) < 40, "3 m/s is 333 s/km: \(ann)")
            // Predicted along the course: the rest at about 3 m/s from the last fix.
            let eta = try #require(ann["eta"] as? Double), next = try #require(ann["next_point_eta"] as? Double)
            #expect(abs(eta - (start + 149 + togo / 3)) < 60 && abs(next - (start + 149 + (1500 - along) / 3)) < 40, "\(ann)")
            #expect(abs((ann["elapsed"] as? Double ?? 0) - 149) < 2)
            // A course nobody runs here is read from the store; one nobody stored is not found.
            let (quietStatus, quiet) = try Self.object(client, "/api/courses/quiet")
            #expect(quietStatus == 200 && (quiet["runners"] as? [Any])?.isEmpty == true && (quiet["points"] as? [Any])?.isEmpty == true)
            let missing = try client.get("/api/courses/nowhere")
            #expect(missing.status == 404 && missing.text == "no course nowhere\n")
            #expect(try client.get("/api/courses/no%20way").status == 404)
        }
    }

    @Test func aRunnersJSONSaysWhereItIsOnItsCourse() async throws {
        try await Self.withRunnersOnPark { client, start in
            let (status, runner) = try Self.object(client, "/api/runners/ann")
            #expect(status == 200)
            let course = try #require(runner["course"] as? [String: Any], "\(runner.keys)")
            #expect(course["name"] as? String == "park" && course["off_course"] as? Bool == false)
            #expect(abs((course["along"] as? Double ?? 0) + (course["togo"] as? Double ?? 0) - 2000) < 5)
            #expect(course["eta"] is Double)
            let points = try #require(course["points"] as? [[String: Any]])
            try #require(points.map { $0["name"] as? String } == ["Aid 1", "Aid 2"], "\(points)")
            // Aid 1 passed 100 s in (300 m at 3 m/s), Aid 2 ahead with its predicted time.
            let passed = try #require(points[0]["passed"] as? Double)
            #expect(abs(passed - (start + 100)) < 5 && points[0]["eta"] is NSNull, "\(points[0])")
            #expect(points[1]["passed"] is NSNull && points[1]["eta"] is Double, "\(points[1])")
            // A runner with no course, and the private one without its share token.
            #expect(try Self.object(client, "/api/runners/cat").1["course"] is NSNull)
            #expect(try client.get("/api/runners/bob").status == 404)
        }
    }

    /// The overview says which course each live runner follows (the page lists the courses with their runners).
    @Test func theOverviewSaysWhichCourseEachRunnerFollows() async throws {
        try await Self.withRunnersOnPark { client, _ in
            let (status, overview) = try Self.object(client, "/api/overview")
            let live = try #require(overview["live"] as? [[String: Any]])
            let courses = Dictionary(uniqueKeysWithValues: live.map { ($0["runner"] as? String ?? "", $0["course"] as Any) })
            #expect(status == 200 && courses["ann"] as? String == "park", "\(live)")
            #expect(courses["cat"] is NSNull, "cat follows no course")
            #expect(courses["bob"] == nil, "a private runner is in no public list")
        }
    }

    /// The runner's page offers the course choice: a POST with the runner's key does what `course:` does.
    @Test func theRunnersPageChoosesACourseWithTheKey() async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            store.submit(.course(Self.park))
            try withPureServer(store: store) { server in
                let (ann, key) = try connectRunner("ann", to: server)
                let web = server.web()
                let form = "application/x-www-form-urlencoded"
                let chosen = try web.post("/runners/ann/course", body: "key=\(key)&course=park", type: form)
                #expect(chosen.status == 200 && chosen.text.hasPrefix(#"{"course":"park","dist":2000."#) && chosen.text.hasSuffix(#""points":2}"#),
                        "\(chosen.text)")
                let fixes = straightRun(count: 20, speed: 3)
                for line in fixes { try ann.send(line) }
                let last = fixes.last!.split(separator: ",").last!
                let paces = try ann.lines(until: "the last pace") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
                #expect(try PaceEvent(line: try #require(paces.last)).course != nil, "on the course chosen on the page")
                #expect(try web.post("/runners/ann/course", body: "key=\(key)&course=nowhere", type: form).status == 404)
                #expect(try web.post("/runners/ann/course", body: "key=\(key)&course=no%20spaces", type: form).status == 400)
                #expect(try web.post("/runners/ann/course", body: "key=0123456789abcdef0123456789abcdef&course=park", type: form).status == 403)
                let off = try web.post("/runners/ann/course", body: "key=\(key)&course=off", type: form)
                #expect(off.status == 200 && off.text == #"{"course":null}"#)
            }
        }
    }

    @Test func aDenseCoursesPathIsThinnedForThePage() async throws {
        let kept = WebAPI.thinnedPath((0...10_000).map(Double.init), limit: 2_000)
        #expect(kept.count <= 2_001 && kept.first == 0 && kept.last == 10_000 && kept == kept.sorted())
        #expect(zip(kept, kept.dropFirst()).allSatisfy { $1 - $0 >= 5 || $1 == 10_000 })
        #expect(WebAPI.thinnedPath([0, 1, 2], limit: 2_000) == [0, 1, 2])
        try await onItsOwnThread {
            let store = MemoryRunStore()
            // A recorded track that wobbles a metre either way every metre: the course keeps every vertex (each is
            // off the line by more than its half-metre thinning), the page's path is thinned further.
            let wobbling = (0...6_000).map { step in
                Coordinate(latitude: 51.5 + Double(step) / 111_229, longitude: -0.12 + (step % 2 == 0 ? 0 : 1.2 / 69_240))
            }
            store.submit(.course(StoredCourse(name: "dense", path: wobbling,
                                              points: [NamedPlace(name: "Mid", coordinate: Self.at(3_000))], created: 1)))
            try withPureServer(store: store) { server in
                let client = server.web()
                let (status, course) = try Self.object(client, "/api/courses/dense")
                let path = try #require(course["path"] as? [[Double]])
                #expect(status == 200 && path.count > 1_000 && path.count <= 2_001, "\(status) \(path.count) vertices")
                let length = zip(wobbling, wobbling.dropFirst()).reduce(0.0) { $0 + Geodesy.distance(from: $1.0, to: $1.1) }
                #expect(abs((path.last?[2] ?? 0) - length) < 1 && abs((course["length"] as? Double ?? 0) - length) < 1,
                        "the finish's along is the file's length, \(length) m")
            }
        }
    }

    /// protocol.md Part 2's examples: the `http` block of `GET /api/courses/…` and the `json` block of a runner's
    /// `course` (the one with `passed`).
    static var documented: (course: [String: Any], progress: [String: Any]) {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("protocol.md")
        let document = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        let part = document.range(of: "\n# Part 2: HTTP").map { document[$0.lowerBound...] } ?? ""
        let lines = part.split(separator: "\n", omittingEmptySubsequences: false)
        func json(_ line: Substring) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        var course: [String: Any] = [:], progress: [String: Any] = [:], inCourseExample = false
        for line in lines {
            if line.hasPrefix("GET /api/courses/") { inCourseExample = true }
            if inCourseExample, line.hasPrefix("{") { course = json(line); inCourseExample = false }
            if line.hasPrefix("{\"name\":"), line.contains("\"passed\":") { progress = json(line) }
        }
        return (course, progress)
    }

    /// Every key of an object, and of the first object in each of its arrays, as `outer.inner` paths.
    static func keys(_ object: [String: Any], prefix: String = "") -> Set<String> {
        var found: Set<String> = []
        for (key, value) in object {
            found.insert(prefix + key)
            if let array = value as? [[String: Any]], let first = array.first {
                found.formUnion(keys(first, prefix: prefix + key + "."))
            }
        }
        return found
    }

    @Test func theDocumentedExamplesHaveTheServersKeys() async throws {
        #expect(!Self.documented.course.isEmpty && !Self.documented.progress.isEmpty, "protocol.md lacks the examples")
        try await Self.withRunnersOnPark { client, _ in
            let course = try Self.object(client, "/api/courses/park").1
            #expect(Self.keys(course) == Self.keys(Self.documented.course))
            let documentedPath = Self.documented.course["path"] as? [[Double]]
            #expect(documentedPath?.allSatisfy { $0.count == (course["path"] as? [[Double]])?.first?.count } == true)
            let progress = try #require(try Self.object(client, "/api/runners/ann").1["course"] as? [String: Any])
            #expect(Self.keys(progress) == Self.keys(Self.documented.progress))
        }
    }
}
