@testable import Broadcaster
import Foundation
import HTTP
import MoonRunnerTestSupport
import RunCore
import Testing
import Wire

/// The saved-run page's elevation profile in headless Chromium: drawn for a run whose phone sent altitudes,
/// absent for one without.
@Suite(.mayBlock, .serialized) struct ElevationBrowserTests {
    @Test func theRunPageDrawsAnElevationProfileOnlyForARunWithAltitudes() async throws {
        try await BrowserTests.withBrowser { server, port, browser in
            let (ann, _) = try connectRunner("ann", to: server)
            let token = try PhoneFixtures.deviceToken(ann)
            let app = try HTTPTestClient(port: port)
            let start = Int(Date().timeIntervalSince1970.rounded(.down))
            for second in 0..<300 {
                let lat = NumberFormat.string(48.85 + Double(second) * 3 / 111_229, decimals: 7)
                // 30 m up over the first 150 s, 20 m down over the rest.
                let altitude = second < 150 ? 100 + Double(second) * 0.2 : 130 - Double(second - 150) * 20 / 150
                try app.send("GET /osmand?id=\(token)&timestamp=\(start + second)&lat=\(lat)&lon=2.35&accuracy=4"
                    + "&altitude=\(NumberFormat.string(altitude, decimals: 2)) HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(try app.response().status == 200)
            }
            try ann.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 20)))
            let gain = try #require(end.elevationGain), loss = try #require(end.elevationLoss)
            #expect(gain > 15 && gain <= 30 && loss > 8 && loss <= 20, "gain \(gain), loss \(loss)")
            try browser.open("http://127.0.0.1:\(port)/runs/\(end.runID)")
            let vertices = try browser.waitFor("the elevation profile", """
                const box = document.getElementById('elevation-box');
                const line = document.querySelector('#elevation-profile polyline');
                return !box.hidden && line ? line.getAttribute('points').split(' ').length : null;
                """) as? Int
            #expect((vertices ?? 0) > 100, "\(vertices ?? 0) vertices")
            print("elevation profile: \(vertices ?? 0) vertices, gain \(gain) m, loss \(loss) m")
            let climb = try browser.script("return document.getElementById('climb').textContent") as? String
            #expect(climb == "+\(Int(gain.rounded())) m −\(Int(loss.rounded())) m", "\(climb ?? "")")
            let range = try browser.script("return document.getElementById('elevation-range').textContent") as? String
            #expect(range?.hasPrefix("10") == true && range?.contains("– 1") == false, "\(range ?? "")")

            // A run sent with loc: (no altitude): no climb, no profile.
            let (bob, _) = try connectRunner("bob", to: server)
            for line in BrowserTests.fixes([(120, 3)], start: Date().timeIntervalSince1970.rounded(.down)) { try bob.send(line) }
            try bob.send("stop:")
            let flat = try RunEndedEvent(event: Event.parse(bob.expect("end:bob", timeout: 20)))
            #expect(flat.elevationGain == nil)
            try browser.open("http://127.0.0.1:\(port)/runs/\(flat.runID)")
            try browser.waitFor("the run's summary", "return document.getElementById('distance').textContent !== '–'")
            let hidden = try browser.script("""
                return [document.getElementById('elevation-box').hidden, document.getElementById('climb-box').hidden];
                """) as? [Bool]
            #expect(hidden == [true, true])
        }
    }
}
