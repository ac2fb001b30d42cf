@testable import Broadcaster
import Foundation
import MoonRunnerTestSupport
import Testing
import WebAssets
import Wire

/// Every page the server serves, in a real headless Chromium under its Content-Security-Policy: nothing a page
/// loads or does is refused (Leaflet from our server, tiles from the configured tile server, the data and the
/// event stream from us), and an injected inline script is.
@Suite(.mayBlock, .serialized) struct SecurityPolicyBrowserTests {
    /// The HTML pages of the routes (`WebAssets.page(forPathSegments:)`): the overview, a runner live (also by
    /// a private runner's share link, and a name nobody has), the badge board and a saved run.
    @Test func noPageBreaksItsContentSecurityPolicy() async throws {
        try await StreetMapBrowserTests.withStreetMap(private: true) { server, port, browser, tiles in
            let (ann, _) = try connectRunner("ann", to: server)
            let (bob, _) = try connectRunner("bob", to: server)
            let (carol, token) = try StreetMapBrowserTests.privateRunner("carol", on: server)
            let start = Date().timeIntervalSince1970.rounded(.down)
            for line in StreetMapBrowserTests.loop(start: start, seconds: 600) {
                try ann.send(line)
                try carol.send(line)
            }
            for line in StreetMapBrowserTests.loop(start: start, seconds: 300) { try bob.send(line) }
            try bob.send("stop:")
            let saved = try RunEndedEvent(event: Event.parse(bob.expect("end:bob", timeout: 30)))
            try ann.expect("badge:ann id=atmosphere", timeout: 30)
            try carol.expect("badge:carol id=atmosphere", timeout: 30)
            let map = "return document.querySelectorAll('#street-map img.leaflet-tile-loaded').length > 0"
            let pages: [(path: String, drawn: String)] = [
                ("/", map),
                ("/runners/ann", map),
                ("/runners/carol?token=\(token)", map),
                ("/runners/nobody", "return document.readyState === 'complete'"),
                ("/runners/ann/badges", "return document.querySelectorAll('.board li').length === 33"),
                ("/runs/\(saved.runID)", map),
            ]
            let web = try HTTPTestClient(port: port)
            _ = try browser.consoleErrors()
            for page in pages {
                let policy = try web.get(page.path).header("Content-Security-Policy") ?? ""
                #expect(policy.contains("script-src 'self'") && policy.contains("img-src 'self' data: http://127.0.0.1:\(tiles.port)"),
                        "\(page.path): \(policy)")
                try browser.open("http://127.0.0.1:\(port)\(page.path)")
                try browser.waitFor("\(page.path) drawn", timeout: 30, page.drawn)
                usleep(500_000)  // what the page does next (more tiles, the stream's events): no event says "done"
                // The page of a name nobody has asks for its data and is told 404: the one error it may log.
                let errors = try browser.consoleErrors().filter { !$0.contains("/api/runners/nobody - Failed to load resource") }
                #expect(errors == [], "\(page.path): \(errors)")
            }
            // The policy is in force, and a refusal would have shown above: an inline script does not run.
            let injected = try browser.script("""
                const script = document.createElement('script');
                script.textContent = 'window.injected = true';
                document.head.appendChild(script);
                return window.injected === true ? 'ran' : 'refused';
                """) as? String
            #expect(injected == "refused")
            #expect(try browser.consoleErrors().contains { $0.contains("Content Security Policy") })
        }
    }

    /// The tile source the policy names for each kind of tile template.
    @Test func theImagePolicyNamesTheTileServersOrigin() {
        #expect(WebPolicy.tileSource("https://tile.openstreetmap.org/{z}/{x}/{y}.png") == "https://tile.openstreetmap.org")
        #expect(WebPolicy.tileSource("http://127.0.0.1:8081/{z}/{x}/{y}.png") == "http://127.0.0.1:8081")
        #expect(WebPolicy.tileSource("https://{s}.tile.example.org/{z}/{x}/{y}.png?key=k") == "https://*.tile.example.org")
        #expect(WebPolicy.tileSource("https://tiles-{s}.example.org/{z}/{x}/{y}.png") == "https:")
        var map = StreetMapConfiguration()
        #expect(!WebPolicy.contentSecurityPolicy(for: map).contains("openstreetmap"), "no Leaflet: no tiles")
        map.leaflet = LeafletFiles(folder: StreetMapConfiguration.debianLeafletFolder)
        if map.leaflet != nil {
            #expect(WebPolicy.contentSecurityPolicy(for: map).contains("img-src 'self' data: https://tile.openstreetmap.org;"))
        }
    }
}
