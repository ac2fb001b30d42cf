@testable import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import WebAssets
import Wire

/// Courses in a real headless Chromium (issue 29): the runner's page draws the course under the track with its
/// points and their times and says how far is left; the course page draws the course, its points and every
/// runner on it, kept live by the event stream. On the street map (Leaflet and the test's own tiles) and as SVG.
@Suite(.mayBlock, .serialized) struct CourseBrowserTests {
    /// The 5 km loop of ``StreetMapBrowserTests/loop(start:seconds:)`` (a park in Paris).
    static let radius = 5_000 / (2 * Double.pi)
    static func onLoop(_ angle: Double) -> Coordinate {
        Coordinate(latitude: 48.8462 + radius * sin(angle) / 111_229, longitude: 2.3372 + radius * (1 - cos(angle)) / 73_300)
    }

    /// The loop as a course, with a point at each quarter but the start.
    static let park = StoredCourse(name: "park", path: (0...240).map { onLoop(Double($0) * 2 * .pi / 240) },
                                   points: [NamedPlace(name: "Aid 1", coordinate: onLoop(.pi / 2)),
                                            NamedPlace(name: "Halfway", coordinate: onLoop(.pi)),
                                            NamedPlace(name: "Aid 2", coordinate: onLoop(3 * .pi / 2))], created: 1)

    /// Fixes at 3.3 m/s around the loop, one a second, seconds `from..<from+count` of a run started at `start`.
    static func fixes(start: Double, from: Int = 0, count: Int) -> [String] {
        (from..<(from + count)).map { second in
            let spot = onLoop(Double(second) * 3.3 / radius)
            return "loc:\(NumberFormat.string(spot.latitude, decimals: 7)),\(NumberFormat.string(spot.longitude, decimals: 7)),4,\(Int(start) + second)"
        }
    }

    /// A runner on the course, `seconds` into its run (ending now); returns its connection and its run's start.
    static func runOnPark(_ name: String, seconds: Int, on server: Server) throws -> (TestClient, Double) {
        let (client, _) = try connectRunner(name, to: server)
        try client.send("course:park")
        try client.expect("ok:course name=park")
        let start = Date().timeIntervalSince1970.rounded(.down) - Double(seconds)
        let lines = fixes(start: start, count: seconds)
        for line in lines { try client.send(line) }
        try client.expect("ack:\(name) ts=\(lines.last!.split(separator: ",").last!)", timeout: 30)
        return (client, start)
    }

    /// A server with `park` stored, the street map (or not) over the test's tiles, and a browser.
    static func withCourse(leaflet given: Bool = true,
                           _ body: @escaping @Sendable (Server, UInt16, WebDriver) throws -> Void) async throws {
        try await onItsOwnThread {
            guard StreetMapBrowserTests.canRun, let leaflet = StreetMapBrowserTests.leaflet else { return }
            let tiles = try TileServer()
            defer { tiles.stop() }
            let store = MemoryRunStore()
            store.submit(.course(park))
            try withServer({ configuration in
                configuration.streetMap.leaflet = given ? leaflet : nil
                configuration.streetMap.tiles = tiles.template
                configuration.streetMap.attribution = "Test tiles"
                configuration.streetMap.attributionURL = nil
            }, store: store) { server in
                let port = try #require(server.httpPort)
                let browser = try WebDriver(width: 1280, height: 1100)
                defer { browser.quit() }
                // Kilometres, whatever language headless Chromium says it speaks (the pages remember the choice).
                try browser.open("http://127.0.0.1:\(port)/")
                try browser.script("localStorage.setItem('mr-unit', 'km')")
                try body(server, port, browser)
                // (The unknown course's 404 is the one error a page may log.)
                #expect(try browser.consoleErrors().filter { !$0.contains("/api/courses/nowhere") } == [])
            }
        }
    }

    @Test func theRunnersPageDrawsTheCourseUnderTheTrackWithItsPointsAndWhatIsLeft() async throws {
        try await Self.withCourse { server, port, browser in
            // 1000 s at 3.3 m/s: past Aid 1 (1250 m) and Halfway (2500 m), Aid 2 (3750 m) next, 1.7 km to go.
            _ = try Self.runOnPark("ann", seconds: 1_000, on: server)
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            let labels = try #require(try browser.waitFor("the course, its points and the track", timeout: 30, """
                const map = document.getElementById('street-map');
                if (!map || !map.querySelector('path.course-line') || map.querySelectorAll('path.segment').length === 0) return null;
                const labels = [...map.querySelectorAll('.pin-label.tier-course')].map(l => l.textContent);
                return map.querySelectorAll('path.course-point').length === 3 && labels.some(t => t.startsWith('Aid 2 ~')) ? labels : null;
                """) as? [String])
            #expect(labels.contains { $0.hasPrefix("Aid 1 ✓ ") } || labels.contains { $0.hasPrefix("Halfway ✓ ") }, "\(labels)")
            #expect(try browser.script("return document.querySelectorAll('#street-map path.course-point.passed').length") as? Int == 2)
            // Under the track: earlier in the overlay's picture, in a muted colour, wider.
            let under = try browser.script("""
                const paths = [...document.querySelectorAll('#street-map .leaflet-overlay-pane path')];
                const course = paths.findIndex(p => p.classList.contains('course-line'));
                const track = paths.findIndex(p => p.classList.contains('segment'));
                const line = paths[course];
                return course >= 0 && course < track && line.getAttribute('stroke') === '#6f7a99' && Number(line.getAttribute('stroke-opacity')) <= 0.5;
                """) as? Bool
            #expect(under == true, "the course is not under the track, muted")
            let box = try #require(try browser.waitFor("km to go", timeout: 10, """
                const togo = document.getElementById('togo').textContent, next = document.getElementById('next-point').textContent;
                return !document.getElementById('course-box').hidden && /^[0-9]+\\.[0-9] km to go$/.test(togo) ? [togo, next] : null;
                """) as? [String])
            #expect(box[0] == "1.7 km to go" && box[1].hasPrefix("Next: Aid 2 at ~"), "\(box)")
            #expect(try browser.script("return document.getElementById('course-link').getAttribute('href')") as? String == "/courses/park")
            #expect(try browser.script("return document.querySelector('#street-map path.course-position') !== null") as? Bool == true)
            try StreetMapBrowserTests.keepScreenshot(browser, as: "course-runner-page.png")
        }
    }

    @Test func theCoursePageShowsEveryRunnerOnItLive() async throws {
        try await Self.withCourse { server, port, browser in
            let (ann, annStart) = try Self.runOnPark("ann", seconds: 1_000, on: server)
            _ = try Self.runOnPark("bob", seconds: 500, on: server)
            try browser.open("http://127.0.0.1:\(port)/courses/park")
            let rows = try #require(try browser.waitFor("the course and its two runners", timeout: 30, """
                const map = document.getElementById('street-map');
                const rows = [...document.querySelectorAll('#course-runners tbody tr')];
                if (!map || !map.querySelector('path.course-line') || map.querySelectorAll('path.runner-marker').length !== 2) return null;
                return rows.length === 2 ? rows.map(r => [r.dataset.runner, r.querySelector('.togo').textContent, r.querySelector('.next').textContent]) : null;
                """) as? [[String]])
            try #require(rows.map { $0[0] } == ["ann", "bob"], "furthest first: \(rows)")
            #expect(rows[0][1] == "1.7 km" && rows[0][2].hasPrefix("Aid 2 ~") && rows[1][2].hasPrefix("Halfway ~"), "\(rows)")
            let labels = try browser.script("return [...document.querySelectorAll('#street-map .pin-label')].map(l => l.textContent)") as? [String] ?? []
            #expect(labels.contains("ann") && labels.contains("bob") && labels.contains { $0.hasPrefix("Aid 1 · ") }, "\(labels)")
            #expect(try browser.script("return document.querySelectorAll('#course-points tbody tr').length") as? Int == 3)
            try StreetMapBrowserTests.keepScreenshot(browser, as: "course-page.png")
            // Live: ann runs on (the stream), cat joins the course (the next refresh of /api/courses/park).
            for line in Self.fixes(start: annStart, from: 1_000, count: 100) { try ann.send(line) }
            try browser.waitFor("ann's progress from the stream", timeout: 6, """
                const row = document.querySelector('#course-runners tbody tr[data-runner="ann"] .togo');
                return row && row.textContent === '1.4 km';
                """)
            _ = try Self.runOnPark("cat", seconds: 100, on: server)
            try browser.waitFor("cat, a newcomer", timeout: 25, """
                return [...document.querySelectorAll('#course-runners tbody tr')].map(r => r.dataset.runner).join() === 'ann,bob,cat';
                """)
            // The overview groups the runners by course, each course linking to its page.
            try browser.open("http://127.0.0.1:\(port)/")
            let course = try browser.waitFor("the courses being run", timeout: 20, """
                const item = document.querySelector('#courses li[data-course="park"]');
                return item && !document.getElementById('courses').hidden ? [item.textContent, item.querySelector('a').getAttribute('href')] : null;
                """) as? [String]
            #expect(course == ["park: 3 runners (ann, bob, cat)", "/courses/park"], "\(String(describing: course))")
            try StreetMapBrowserTests.keepScreenshot(browser, as: "overview-courses.png")
        }
    }

    @Test func withoutLeafletBothPagesDrawTheCourseAsSVG() async throws {
        try await Self.withCourse(leaflet: false) { server, port, browser in
            _ = try Self.runOnPark("ann", seconds: 1_000, on: server)
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            try browser.waitFor("the SVG course under the track", timeout: 30, """
                const svg = document.querySelector('svg#track');
                const nodes = [...svg.children];
                const course = nodes.findIndex(n => n.classList.contains('course-line'));
                const track = nodes.findIndex(n => n.classList.contains('segment'));
                const aid = svg.querySelector('g.course-point[data-point="Aid 2"]');
                return course >= 0 && track > course && aid && aid.textContent.startsWith('Aid 2 ~')
                    && /km to go$/.test(document.getElementById('togo').textContent);
                """)
            try StreetMapBrowserTests.keepScreenshot(browser, as: "course-runner-page-svg.png")
            try browser.open("http://127.0.0.1:\(port)/courses/park")
            try browser.waitFor("the SVG course with ann on it", timeout: 30, """
                const svg = document.querySelector('svg#track');
                return svg.querySelector('path.course-line') && svg.querySelectorAll('g.course-point').length === 3
                    && svg.querySelector('g.course-runner[data-runner="ann"] text') !== null
                    && document.querySelectorAll('#course-runners tbody tr').length === 1;
                """)
            try StreetMapBrowserTests.keepScreenshot(browser, as: "course-page-svg.png")
            // A course nobody stored says so.
            try browser.open("http://127.0.0.1:\(port)/courses/nowhere")
            try browser.waitFor("no such course", timeout: 10, "return document.getElementById('status').textContent === 'no such course'")
        }
    }
}
