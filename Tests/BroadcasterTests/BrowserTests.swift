@testable import Broadcaster
@testable import LiveCore
import Foundation
import RunCore
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// The live page in a real headless Chromium: it updates as the run streams over TCP, draws the track in
/// pace colours, and a cheer typed into it reaches the runner's connection.
@Suite(.mayBlock, .serialized) struct BrowserTests {
    /// CI installs Chromium (`.ci/run`); elsewhere without it the test says so and passes.
    static var canRun: Bool {
        if WebDriver.available { return true }
        if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("CI must install chromium and chromium-driver") }
        return false
    }

    /// Fixes north from Paris, one a second (stamped from now), at each stretch's speed.
    static func fixes(_ stretches: [(seconds: Int, speed: Double)], start: Double) -> [String] {
        var lines: [String] = []
        var metres = 0.0, second = 0
        for (seconds, speed) in stretches {
            for _ in 0..<seconds {
                let lat = 48.85 + metres / 111_229, lon = 2.35 + sin(metres / 300) * 0.001
                lines.append("loc:\(NumberFormat.string(lat, decimals: 7)),\(NumberFormat.string(lon, decimals: 7)),4,\(Int(start) + second)")
                metres += speed
                second += 1
            }
        }
        return lines
    }

    /// A server and a headless browser for one test body, on a thread of its own (nothing without Chromium).
    static func withBrowser(_ body: @escaping @Sendable (Server, UInt16, WebDriver) throws -> Void) async throws {
        try await onItsOwnThread {
            guard Self.canRun else { return }
            try withServer { server in
                let port = try #require(server.httpPort)
                let browser = try WebDriver()
                defer { browser.quit() }
                try body(server, port, browser)
            }
        }
    }

    @Test func theRunnerPageFollowsARunLiveAndSendsCheers() async throws {
        try await Self.withBrowser { server, port, browser in
            let (ann, _) = try connectRunner("ann", to: server)
            try ann.send("goal:42195 14400")
            try ann.expect("ok:goal")
            let start = Date().timeIntervalSince1970.rounded(.down)
            // Slow, steady, fast: three paces the map must tell apart. The first part is on before the page opens.
            let run = Self.fixes([(240, 2.0), (240, 3.2), (240, 4.6)], start: start)
            for line in run[..<300] { try ann.send(line) }
            try ann.expect("badge:ann id=earth")
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            let firstDistance = try browser.waitFor("a distance", """
                const text = document.getElementById('distance').textContent;
                return /[0-9]/.test(text) ? text : null;
                """) as? String
            // The late joiner sees the run so far, badges included.
            try browser.waitFor("the Earth badge", "return document.querySelectorAll('#badges li').length >= 1")
            for line in run[300...] { try ann.send(line) }
            try browser.waitFor("the distance to grow", """
                return document.getElementById('distance').textContent !== arguments[0];
                """.replacingOccurrences(of: "arguments[0]", with: "'\(firstDistance ?? "")'"))
            try browser.waitFor("two badges", "return document.querySelectorAll('#badges li').length >= 2")
            // The goal's predicted finish (hours at these paces) and its time of day.
            let finish = try browser.waitFor("the predicted finish", """
                const box = document.getElementById('forecast');
                const text = document.getElementById('finish').textContent;
                return !box.hidden && /^[0-9]+:[0-9]{2}:[0-9]{2} \\(/.test(text) ? text : null;
                """) as? String
            #expect(finish != nil)
            let colours = try browser.waitFor("three pace colours", """
                const strokes = new Set([...document.querySelectorAll('svg#track [stroke]')]
                    .filter(e => e.tagName !== 'svg' && e.tagName !== 'g')
                    .map(e => e.getAttribute('stroke').toUpperCase()));
                return strokes.size >= 3 ? [...strokes] : null;
                """) as? [String]
            #expect((colours?.count ?? 0) >= 3, "\(colours ?? [])")

            let folder = ProcessInfo.processInfo.environment["MOONRUNNER_SCREENSHOT_DIR"] ?? temporaryFolder().path
            let shot = try browser.screenshot()
            #expect(shot.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            try shot.write(to: URL(fileURLWithPath: folder).appendingPathComponent("runner-page.png"))

            try browser.type("Allez Ann!", into: "#cheer-text", thenClick: "#cheer-send")
            let cheer = try CheerEvent(event: Event.parse(ann.expect("msg:ann", timeout: 10)))
            #expect(cheer.text == "Allez Ann!")

        }
    }

    @Test func theOverviewIsALiveLeaderboard() async throws {
        try await Self.withBrowser { server, port, browser in
            try browser.open("http://127.0.0.1:\(port)/")
            let start = Date().timeIntervalSince1970.rounded(.down)
            let (ann, _) = try connectRunner("ann", to: server)
            let (bob, _) = try connectRunner("bob", to: server)
            // ann leads at first; bob, faster from the second minute, passes her while the page is open.
            let annRun = Self.fixes([(240, 3)], start: start), bobRun = Self.fixes([(120, 2), (120, 5)], start: start)
            for line in annRun[..<120] { try ann.send(line) }
            for line in bobRun[..<120] { try bob.send(line) }
            let first = try browser.waitFor("both runners, ann first", """
                const rows = [...document.querySelectorAll('#overview tbody tr')].map(r => r.dataset.runner);
                return rows.length === 2 && rows[0] === 'ann' ? rows : null;
                """) as? [String]
            #expect(first == ["ann", "bob"])
            for line in annRun[120...] { try ann.send(line) }
            for line in bobRun[120...] { try bob.send(line) }
            let board = try browser.waitFor("bob first after passing ann, ann's gap shown", """
                const rows = [...document.querySelectorAll('#overview tbody tr')];
                if (rows.length !== 2 || rows[0].dataset.runner !== 'bob') return null;
                const cells = rows.map(r => [r.querySelector('.place').textContent, r.querySelector('.gap').textContent]);
                return cells[1][1].includes('·') ? cells : null;
                """) as? [[String]]
            #expect(board?.map { $0[0] } == ["1", "2"] && board?[0][1] == "leader", "\(board ?? [])")
        }
    }

    @Test func aShareLinkOpensAPrivateRunnersPageUntilUnshared() async throws {
        try await Self.withBrowser { server, port, browser in
            let (ann, _) = try connectRunner("ann", to: server)
            try ann.send("private:on")
            try ann.expect("ok:private")
            try ann.send("share:")
            let token = try #require(try OkEvent(event: Event.parse(ann.expect("ok:share")))["token"])
            let start = Date().timeIntervalSince1970.rounded(.down)
            let run = Self.fixes([(300, 3)], start: start)
            for line in run[..<120] { try ann.send(line) }
            try ann.expect("badge:ann id=earth")
            // Without the token the page knows no such runner, as for a name nobody has.
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            try browser.waitFor("unknown runner", "return document.getElementById('status').textContent === 'unknown runner'")
            try browser.open("http://127.0.0.1:\(port)/runners/ann?token=\(token)")
            let shown = try browser.waitFor("the run with the token", """
                const text = document.getElementById('distance').textContent;
                return /[1-9]/.test(text) ? text : null;
                """) as? String
            try ann.send("unshare:*")
            try ann.expect("ok:unshare count=1")
            for line in run[120...] { try ann.send(line) }
            try ann.send("ping:")
            try ann.expect("ok:ping")
            // Nothing more reaches the open page; a reload knows no such runner again.
            let after = try browser.script("return document.getElementById('distance').textContent") as? String
            #expect(after == shown, "the page still moved after unshare: \(after ?? "") vs \(shown ?? "")")
            try browser.open("http://127.0.0.1:\(port)/runners/ann?token=\(token)")
            try browser.waitFor("unknown runner after unshare",
                                "return document.getElementById('status').textContent === 'unknown runner'")
        }
    }

    @Test func theRunPageReplaysTheRunWithAMovingMarkerAtTheChosenSpeed() async throws {
        try await Self.withBrowser { server, port, browser in
            let (ann, _) = try connectRunner("ann", to: server)
            for line in Self.fixes([(300, 3)], start: Date().timeIntervalSince1970.rounded(.down)) { try ann.send(line) }
            try ann.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 20)))
            try browser.open("http://127.0.0.1:\(port)/runs/\(end.runID)")
            try browser.waitFor("the replay control", "return document.getElementById('replay-marker') !== null")
            _ = try browser.script("""
                const speed = document.getElementById('replay-speed');
                speed.value = '100';
                speed.dispatchEvent(new Event('change'));
                document.getElementById('replay-play').click();
                """)
            // At 100x the 299 s run takes 3 s: the marker moves, its run time grows, and it stops at the end.
            let early = try browser.waitFor("the marker moving", """
                const m = document.getElementById('replay-marker');
                const t = Number(m.dataset.time || 0);
                return t > 20 && t < 299 ? [t, Number(m.getAttribute('cy'))] : null;
                """) as? [Double]
            let done = try browser.waitFor("the end of the run", """
                const m = document.getElementById('replay-marker');
                return Number(m.dataset.time) >= 299 && document.getElementById('replay-play').textContent === 'Replay'
                    ? [Number(m.dataset.time), Number(m.getAttribute('cy'))] : null;
                """) as? [Double]
            #expect(early != nil && done != nil && early?[1] != done?[1], "\(early ?? []) then \(done ?? [])")
            let clock = try browser.script("return document.getElementById('replay-clock').textContent") as? String
            #expect(clock?.hasPrefix("4:59") == true, "\(clock ?? "")")
            // The clock's distance follows the km/mi switch, as every other distance on the page.
            for unit in ["mi", "km"] {
                try browser.script("document.getElementById('unit-\(unit)').click()")
                let shown = try browser.script("return document.getElementById('replay-clock').textContent") as? String
                #expect(shown?.hasPrefix("4:59") == true && shown?.hasSuffix(" \(unit)") == true, "\(unit): \(shown ?? "")")
            }
            // A run that is not there: said so, with nothing to replay or download.
            try browser.open("http://127.0.0.1:\(port)/runs/\(end.runID + 1000)")
            try browser.waitFor("no such run", "return document.getElementById('status').textContent === 'no such run'")
            let controls = try browser.script("""
                return ['replay', 'map-box', 'summary'].map(id => document.getElementById(id).getBoundingClientRect().height)
                    .concat([document.querySelector('.downloads').getBoundingClientRect().height]);
                """) as? [Double]
            #expect(controls == [0, 0, 0, 0], "controls shown for a missing run: \(controls ?? [])")
        }
    }

    @Test func thePageColoursTheTrackByTheSameRuleAsTheExports() async throws {
        try await Self.withBrowser { server, port, browser in
            try browser.open("http://127.0.0.1:\(port)/runners/nobody")
            try browser.waitFor("the page's script", "return typeof MR !== 'undefined' && typeof MR.paceColours === 'function'")
            // A run with a slow start, a walk break and a fast finish, as the page gets it: [lat, lon, dist, time].
            let start = 1_800_000_000.0
            var fixes: [Fix] = []
            var metres = 0.0, second = 0.0
            for (seconds, speed) in [(300, 2.4), (200, 3.2), (60, 1.2), (300, 3.4), (120, 4.5)] as [(Int, Double)] {
                for _ in 0..<seconds {
                    fixes.append(Fix(latitude: 48.85 + metres / 111_229, longitude: 2.35 + sin(metres / 400) * 0.002,
                                     accuracy: 4, timestamp: start + second))
                    metres += speed
                    second += 1
                }
            }
            let points = String(decoding: TrackSnapshot.points(fixes, started: start), as: UTF8.self)
            let page = try #require(try browser.script("return MR.paceColours(\(points)).colours") as? [String])
            let swift = PaceColours.colours(for: fixes).map(\.hex)
            #expect(page.count == swift.count)
            let same = zip(page, swift).filter { $0 == $1 }.count
            // Identical but for rounding at a step's edge (the page reads distances to the centimetre).
            #expect(same * 100 >= swift.count * 99, "\(same) of \(swift.count) segments coloured alike")
            #expect(Set(swift).count >= 8, "a run of several paces uses many colours")
        }
    }

    @Test func theRunnerConnectsAPhoneAndStopsTheRunFromThePage() async throws {
        try await onItsOwnThread {
            guard Self.canRun else { return }
            try withServer { server in
                let port = try #require(server.httpPort)
                let (ann, key) = try connectRunner("ann", to: server)
                let browser = try WebDriver()
                defer { browser.quit() }
                try browser.open("http://127.0.0.1:\(port)/runners/ann")
                try browser.script("document.getElementById('runner-tools').open = true")
                try browser.type(key, into: "#runner-key", thenClick: "#device-make")
                let token = try #require(try browser.waitFor("a device token", """
                    const text = document.getElementById('device-token').textContent;
                    return text.length === 32 ? text : null;
                    """) as? String)
                // The token works for an app, and the app's position starts ann's run.
                let app = try HTTPTestClient(port: port)
                let now = Int(Date().timeIntervalSince1970)
                #expect(try app.get("/osmand?id=\(token)&timestamp=\(now)&lat=48.85&lon=2.35&accuracy=5").status == 200)
                try ann.expect("run:ann")
                // The box lists the phone once its token is made (no position yet when listed).
                try browser.waitFor("the phone listed", "return document.querySelectorAll('#phone-list li').length === 1")
                try browser.script("document.getElementById('run-stop').click()")
                #expect(try RunEndedEvent(event: Event.parse(ann.expect("end:ann"))).reason == .stop)
                try browser.waitFor("the page says so", "return document.getElementById('runner-tools-status').textContent.includes('stopped')")
            }
        }
    }
}
