@testable import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing
import WebAssets
import Wire

/// The pages on a street map, in a real headless Chromium: Leaflet from Debian's `libjs-leaflet` served by our
/// server, tiles from a tile server of the test's own on 127.0.0.1 (one PNG for every tile). What a spectator
/// sees: tiles around the runner, the track and marker over them, attribution, no tiles for a private
/// runner's share link, labels that do not overlap, pages that fit a phone, and an honest "last seen".
@Suite(.mayBlock, .serialized) struct StreetMapBrowserTests {
    /// CI installs Chromium and libjs-leaflet (`.ci/run`); elsewhere without them the tests say so and pass.
    static var leaflet: LeafletFiles? {
        let files = LeafletFiles(folder: StreetMapConfiguration.debianLeafletFolder)
        if files == nil, ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("CI must install libjs-leaflet") }
        return files
    }

    static var canRun: Bool {
        if WebDriver.available { return true }
        if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("CI must install chromium and chromium-driver") }
        return false
    }

    /// A 5 km loop around a park in Paris, run twice at 3.3 m/s, one fix a second from `start`: a dozen badges.
    static func loop(start: Double, seconds: Int = 3_030) -> [String] {
        let radius = 5_000 / (2 * Double.pi)
        return (0..<seconds).map { second in
            let angle = Double(second) * 3.3 / radius
            let lat = 48.8462 + radius * sin(angle) / 111_229, lon = 2.3372 + radius * (1 - cos(angle)) / 73_300
            return "loc:\(NumberFormat.string(lat, decimals: 7)),\(NumberFormat.string(lon, decimals: 7)),4,\(Int(start) + second)"
        }
    }

    /// A server with the street map, a tile server and a browser of `width`, for one test body.
    static func withStreetMap(width: Int = 1280, private allowed: Bool = false, leaflet given: Bool = true,
                              _ body: @escaping @Sendable (Server, UInt16, WebDriver, TileServer) throws -> Void) async throws {
        try await onItsOwnThread {
            guard Self.canRun, let leaflet = Self.leaflet else { return }
            let tiles = try TileServer()
            defer { tiles.stop() }
            try withServer({ configuration in
                configuration.streetMap.leaflet = given ? leaflet : nil
                configuration.streetMap.tiles = tiles.template
                configuration.streetMap.attribution = "Test tiles"
                configuration.streetMap.attributionURL = nil
                configuration.streetMap.tilesForPrivateRunners = allowed
            }) { server in
                let port = try #require(server.httpPort)
                let browser = try WebDriver(width: width, height: 1100)
                defer { browser.quit() }
                try body(server, port, browser, tiles)
            }
        }
    }

    /// Saves a screenshot where `MOONRUNNER_SCREENSHOT_DIR` says (README's pictures come from here).
    static func keepScreenshot(_ browser: WebDriver, as name: String) throws {
        let folder = ProcessInfo.processInfo.environment["MOONRUNNER_SCREENSHOT_DIR"] ?? temporaryFolder().path
        let shot = try browser.screenshot()
        #expect(shot.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        try shot.write(to: URL(fileURLWithPath: folder).appendingPathComponent(name))
    }

    @Test func theLiveRunnerPageDrawsTheTrackOverTilesAroundTheRunner() async throws {
        try await Self.withStreetMap { server, port, browser, tiles in
            let (ann, _) = try connectRunner("ann", to: server)
            let start = Date().timeIntervalSince1970.rounded(.down)
            let run = Self.loop(start: start)
            for line in run { try ann.send(line) }
            try ann.send("ping:")
            try ann.expect("ok:ping", timeout: 30)
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            let drawn = try #require(try browser.waitFor("the track, its pins and the marker on loaded tiles", timeout: 30, """
                const map = document.getElementById('street-map');
                if (!map) return null;
                const tiles = map.querySelectorAll('img.leaflet-tile-loaded').length;
                const segments = map.querySelectorAll('path.segment').length;
                const pins = map.querySelectorAll('path.pin').length;
                const marker = map.querySelector('path.position');
                return tiles > 0 && segments > 0 && pins >= 10 && marker ? [tiles, segments, pins] : null;
                """) as? [Int])
            // Drawn where the map is, not collapsed: the track's and the marker's boxes have a size and lie in the map.
            let painted = try browser.script("""
                const map = document.getElementById('street-map').getBoundingClientRect();
                const inside = (e) => { const r = e.getBoundingClientRect();
                    return r.width > 0 && r.height > 0 && r.left < map.right && r.right > map.left && r.top < map.bottom && r.bottom > map.top; };
                const svg = document.querySelector('#street-map .leaflet-overlay-pane svg').getBoundingClientRect();
                return inside(document.querySelector('#street-map path.position'))
                    && [...document.querySelectorAll('#street-map path.segment')].some(inside)
                    && svg.width >= map.width * 0.9 && svg.height >= map.height * 0.9;
                """) as? Bool
            #expect(painted == true, "the track or marker has no size on the map")
            // The track and marker are drawn over the tiles: in the pane Leaflet stacks above the tiles' pane.
            let onTop = try browser.script("""
                const marker = document.querySelector('#street-map path.position');
                const track = document.querySelector('#street-map path.segment');
                const overlay = marker.closest('.leaflet-pane'), tilePane = document.querySelector('#street-map .leaflet-tile-pane');
                return overlay === track.closest('.leaflet-pane') && overlay !== tilePane
                    && Number(getComputedStyle(overlay).zIndex) > Number(getComputedStyle(tilePane).zIndex);
                """) as? Bool
            #expect(onTop == true, "something covers the marker")
            // The tiles asked for cover the runner's newest position, at the zoom the map shows (waited for: a
            // busy machine's Leaflet loads the tiles of the view one by one, the marker's among the last).
            let zooms = Set(tiles.requests.compactMap(\.z))
            let covered = try? browser.waitFor("a loaded tile under the marker", timeout: 30, """
                const c = document.querySelector('#street-map path.position').getBoundingClientRect();
                const x = c.x + c.width / 2, y = c.y + c.height / 2;
                return [...document.querySelectorAll('#street-map img.leaflet-tile-loaded')].some(img => {
                    const r = img.getBoundingClientRect();
                    return r.x <= x && x < r.x + r.width && r.y <= y && y < r.y + r.height;
                });
                """)
            #expect(covered as? Bool == true, "no loaded tile under the marker (\(drawn), zooms \(zooms))")
            let loopTiles = zooms.map { zoom in TileServer.tile(latitude: 48.8462, longitude: 2.3372, zoom: zoom) }
            #expect(tiles.requests.contains { request in
                guard let z = request.z else { return false }
                let tile = TileServer.tile(latitude: 48.8462, longitude: 2.3372, zoom: z)
                return request.x == tile.x && request.y == tile.y
            }, "the loop's start was not among the tiles: \(loopTiles)")
            // The policy's referrer: our origin, never the page's path (a share link's token would be in it).
            let referers = Set(tiles.requests.compactMap(\.referer))
            #expect(referers == ["http://127.0.0.1:\(port)/"], "\(referers)")
            // Attribution, visible on the map.
            let attribution = try browser.script("""
                const a = document.querySelector('#street-map .leaflet-control-attribution');
                const r = a && a.getBoundingClientRect();
                return a && r.width > 0 && r.height > 0 && r.bottom <= window.innerHeight + window.scrollY + 2000 ? a.textContent : null;
                """) as? String
            #expect(attribution?.contains("Test tiles") == true, "\(attribution ?? "none")")
            // Labels: none overlapping, none under 11 px.
            let labels = try #require(try browser.script("""
                const boxes = [...document.querySelectorAll('#street-map .pin-label')].map(l => l.getBoundingClientRect());
                const sizes = [...document.querySelectorAll('#street-map .pin-label')].map(l => parseFloat(getComputedStyle(l).fontSize));
                let overlaps = 0;
                for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
                    const a = boxes[i], b = boxes[j];
                    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps++;
                }
                return [boxes.length, overlaps, Math.min(...sizes)];
                """) as? [Double])
            #expect(labels[0] >= 3 && labels[1] == 0 && labels[2] >= 11, "labels, overlaps, smallest size: \(labels)")
            try Self.keepScreenshot(browser, as: "live-page.png")
        }
    }

    /// A runner gone private, and a share token for its pages.
    static func privateRunner(_ name: String, on server: Server) throws -> (TestClient, String) {
        let (runner, _) = try connectRunner(name, to: server)
        try runner.send("private:on")
        try runner.expect("ok:private")
        try runner.send("share:")
        let token = try #require(try OkEvent(event: Event.parse(runner.expect("ok:share")))["token"])
        return (runner, token)
    }

    @Test func aPrivateRunnersShareLinkAsksForNoTiles() async throws {
        try await Self.withStreetMap { server, port, browser, tiles in
            let (ann, token) = try Self.privateRunner("ann", on: server)
            for line in Self.loop(start: Date().timeIntervalSince1970.rounded(.down), seconds: 600) { try ann.send(line) }
            try ann.expect("badge:ann id=atmosphere", timeout: 30)
            try browser.open("http://127.0.0.1:\(port)/runners/ann?token=\(token)")
            try browser.waitFor("the track on a map without tiles", timeout: 30, """
                const map = document.getElementById('street-map');
                return map && map.querySelectorAll('path.segment').length > 0 && map.querySelector('path.position') !== null
                    && document.querySelector('.map-note').textContent.includes('private');
                """)
            #expect(try browser.script("return document.querySelectorAll('#street-map img.leaflet-tile').length") as? Int == 0)
            #expect(tiles.requests.isEmpty, "a private runner's page asked the tile server: \(tiles.requests.prefix(3))")
        }
        // Unless the operator allows it.
        try await Self.withStreetMap(private: true) { server, port, browser, tiles in
            let (ann, token) = try Self.privateRunner("ann", on: server)
            for line in Self.loop(start: Date().timeIntervalSince1970.rounded(.down), seconds: 300) { try ann.send(line) }
            try ann.expect("badge:ann id=earth", timeout: 30)
            try browser.open("http://127.0.0.1:\(port)/runners/ann?token=\(token)")
            try browser.waitFor("tiles for a private runner where the operator allows them", timeout: 30, "return document.querySelectorAll('#street-map img.leaflet-tile-loaded').length > 0")
            // The token never leaves for the tile server: not in a tile URL, not in a referrer.
            #expect(!tiles.requests.contains { $0.path.contains(token) || ($0.referer ?? "").contains(token) })
        }
    }

    @Test func everyPageFitsAPhonesWidth() async throws {
        try await Self.withStreetMap(width: 390) { server, port, browser, _ in
            let (ann, _) = try connectRunner("ann", to: server)
            let (bob, _) = try connectRunner("bob", to: server)
            let start = Date().timeIntervalSince1970.rounded(.down)
            for line in Self.loop(start: start, seconds: 1_500) { try ann.send(line) }
            for line in Self.loop(start: start, seconds: 1_200) { try bob.send(line) }
            try ann.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 30)))
            for line in Self.loop(start: start + 1_600, seconds: 300) { try ann.send(line) }
            try ann.expect("run:ann", timeout: 30)
            let pages = ["/", "/runners/ann", "/runs/\(end.runID)", "/runners/ann/badges"]
            for page in pages {
                try browser.open("http://127.0.0.1:\(port)\(page)")
                try browser.waitFor("\(page) drawn", timeout: 30, """
                    return document.readyState === 'complete' && document.querySelector('main') !== null
                        && (document.querySelectorAll('#overview tbody tr, #street-map path.segment, .board li').length > 0);
                    """)
                let widths = try #require(try browser.script(
                    "return [document.documentElement.scrollWidth, window.innerWidth, document.body.scrollWidth]") as? [Int])
                #expect(widths[1] == 390, "the browser is \(widths[1]) px wide, not a phone's 390")
                #expect(widths[0] <= widths[1] && widths[2] <= widths[1], "\(page) is \(widths[0]) px wide at \(widths[1])")
                let smallest = try browser.script("""
                    const sizes = [...document.querySelectorAll('.pin-label, #overview td, .stats .value')]
                        .filter(e => e.getBoundingClientRect().width > 0).map(e => parseFloat(getComputedStyle(e).fontSize));
                    return sizes.length ? Math.min(...sizes) : 99;
                    """) as? Double
                #expect((smallest ?? 0) >= 11, "\(page): text of \(smallest ?? 0) px")
                if page == "/runners/ann" { try Self.keepScreenshot(browser, as: "live-page-phone.png") }
                guard page == "/" else { continue }
                // The overview: exactly one leader, and the current pace and next badge on screen.
                let overview = try browser.script("""
                    return [...document.querySelectorAll('#overview tbody tr')].map(r => {
                        const on = (c) => { const b = r.querySelector(c).getBoundingClientRect(); return b.width > 0 && b.right <= window.innerWidth; };
                        return [r.querySelector('.gap').textContent, on('.pace-current') && on('.next')];
                    });
                    """) as? [[Any]]
                #expect(overview?.filter { $0.first as? String == "leader" }.count == 1, "\(overview ?? [])")
                #expect(overview?.allSatisfy { $0.last as? Bool == true } == true, "pace or next badge off screen: \(overview ?? [])")
            }
        }
    }

    @Test func aRunnerNotHeardFromIsShownAsLastSeenWithAStaleMarker() async throws {
        try await Self.withStreetMap { server, port, browser, _ in
            let (ann, _) = try connectRunner("ann", to: server)
            // Eight fixes ending 1 s ago (the first is fresh enough to start a run), then nothing: a phone
            // without signal.
            let now = Date().timeIntervalSince1970.rounded(.down)
            for line in Self.loop(start: now - 8, seconds: 8) { try ann.send(line) }
            try ann.expect("badge:ann id=earth", timeout: 30)
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            try browser.waitFor("the marker, fresh", timeout: 30, """
                const m = document.querySelector('#street-map path.position');
                return m && !m.classList.contains('stale') && document.getElementById('last-seen').hidden;
                """)
            // Past 15 s the page says so, counting up, and the marker looks stale.
            let said = try #require(try browser.waitFor("'last seen'", timeout: 40, """
                const line = document.getElementById('last-seen');
                const m = document.querySelector('#street-map path.position');
                return !line.hidden && /^Last seen 1[6-9] s ago$/.test(line.textContent) && m.classList.contains('stale')
                    ? line.textContent : null;
                """) as? String)
            try browser.waitFor("the count going on", timeout: 10, """
                return document.getElementById('last-seen').textContent !== '\(said)';
                """)
            // A fix arrives: fresh again.
            try ann.send(Self.loop(start: Date().timeIntervalSince1970.rounded(.down) - 9, seconds: 10).last!)
            try browser.waitFor("fresh again", timeout: 30, """
                const m = document.querySelector('#street-map path.position');
                return !m.classList.contains('stale') && document.getElementById('last-seen').hidden;
                """)
            try ann.send("stop:")
            try browser.waitFor("when it ended", timeout: 30, """
                const text = document.getElementById('last-seen').textContent;
                return /^Finished at [0-9]{1,2}:[0-9]{2}.* \\([0-9]+ s ago\\)$/.test(text) ? text : null;
                """)
        }
    }

    @Test func withoutLeafletThePagesDrawTheTrackAsSVG() async throws {
        try await Self.withStreetMap(leaflet: false) { server, port, browser, tiles in
            let (ann, _) = try connectRunner("ann", to: server)
            for line in Self.loop(start: Date().timeIntervalSince1970.rounded(.down), seconds: 600) { try ann.send(line) }
            try ann.expect("badge:ann id=atmosphere", timeout: 30)
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            try browser.waitFor("the SVG track", timeout: 30, "return document.querySelectorAll('svg#track path.segment').length > 0")
            #expect(try browser.script("return typeof L === 'undefined' && document.getElementById('street-map') === null") as? Bool == true)
            #expect(tiles.requests.isEmpty)
            // Its labels are 12 screen pixels too, whatever the picture's width.
            let size = try browser.script("""
                const label = document.querySelector('svg#track .pin text');
                return label ? label.getBoundingClientRect().height : 0;
                """) as? Double
            #expect((size ?? 0) >= 11, "SVG labels \(size ?? 0) px high")
        }
    }
}
