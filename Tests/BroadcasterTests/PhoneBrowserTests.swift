@testable import Broadcaster
import Foundation
import HTTP
import MoonRunnerTestSupport
import RunCore
import Testing
import Wire

/// What a runner's phone says, as a viewer of the runner's page sees it in a real headless Chromium: the
/// phone app's own requests over HTTP to a server in this process (issue 25). An SOS (its banner, its time,
/// "Show on the map", a late viewer, a privacy zone with and without the share link), the battery (its level,
/// low below 15%), and the runner's "Connect a phone" box (label, app, battery, an OwnTracks app sending
/// encrypted messages). The page's console has no errors throughout.
@Suite(.mayBlock, .serialized) struct PhoneBrowserTests {
    typealias Backlog = PhoneFixtures

    /// A position as Traccar Client / OsmAnd send it (`extra`: `&alarm=sos`, `&batt=…`).
    static func osmAnd(_ fix: Fix, token: String, _ extra: String = "") -> String {
        Backlog.osmAnd(fix, token: token) + extra
    }

    /// The phone's positions, each answered 200.
    static func send(_ fixes: some Sequence<Fix>, token: String, app: HTTPTestClient, _ extra: String = "") throws {
        for fix in fixes {
            let answer = try app.get(Self.osmAnd(fix, token: token, extra))
            #expect(answer.status == 200, "\(answer)")
        }
    }

    /// The SOS's time as the page may show it: the browser's locale decides 24 h or 12 h (headless Chromium's is
    /// en-US whatever `--lang` says), in the browser's time zone, which is this process's.
    static func clocks(_ unixSeconds: Double) -> Set<String> {
        Set([("en_GB", "HH:mm:ss"), ("en_US", "hh:mm:ss a")].map { locale, format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: locale)
            formatter.timeZone = .current
            formatter.dateFormat = format
            return formatter.string(from: Date(timeIntervalSince1970: unixSeconds))
        })
    }

    /// The banner's text for an SOS at `time` (`where`: what follows the time).
    static func banners(_ time: Double, where place: String = "") -> Set<String> {
        Set(clocks(time).map { "ann raised an SOS at \($0)\(place)." })
    }

    static func expectNoConsoleErrors(_ browser: WebDriver, _ when: String) throws {
        let errors = try browser.consoleErrors()
        #expect(errors.isEmpty, "console errors \(when): \(errors)")
    }

    /// The SOS ring's distance in pixels from the map's middle (nil without a ring).
    static let sosOffCentre = """
        const ring = document.querySelector('#street-map path.sos-marker');
        if (!ring) return null;
        const r = ring.getBoundingClientRect(), m = document.getElementById('street-map').getBoundingClientRect();
        return Math.hypot(r.x + r.width / 2 - (m.x + m.width / 2), r.y + r.height / 2 - (m.y + m.height / 2));
        """

    @Test func anSOSShowsItsTimeAndShowOnTheMapGoesThere() async throws {
        try await StreetMapBrowserTests.withStreetMap { server, port, browser, _ in
            let (ann, _) = try connectRunner("ann", to: server)
            let token = try PhoneFixtures.deviceToken(ann)
            let app = try HTTPTestClient(port: port)
            let fixes = Backlog.queue(count: 40)
            try Self.send(fixes.dropLast(), token: token, app: app)
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            try browser.waitFor("the track, no SOS", timeout: 30, """
                return document.querySelectorAll('#street-map path.segment').length > 0 && document.getElementById('sos').hidden;
                """)
            let sos = fixes.last!
            #expect(try app.get(Self.osmAnd(sos, token: token, "&alarm=sos")).status == 200)
            let expected = Self.banners(sos.timestamp)
            let banner = try browser.waitFor("the SOS banner", """
                const box = document.getElementById('sos');
                return !box.hidden && box.getBoundingClientRect().height > 0 ? document.getElementById('sos-text').textContent : null;
                """) as? String
            #expect(expected.contains(banner ?? ""), "\(banner ?? "")")
            #expect(try browser.script("""
                return !document.getElementById('sos-show').hidden
                    && document.getElementById('sos-geo').getAttribute('href') === 'geo:\(sos.latitude),\(sos.longitude)';
                """) as? Bool == true)
            // The ring where the SOS was, on the map.
            try browser.waitFor("the SOS ring on the map", """
                const ring = document.querySelector('#street-map path.sos-marker');
                return ring && ring.getBoundingClientRect().width > 0;
                """)
            // The viewer pans away; "Show on the map" brings the SOS to the map's middle, and the next position the
            // phone sends does not take it away again.
            try browser.drag("#street-map", by: -420, 260)
            try browser.waitFor("the SOS away from the middle", "const d = (() => { \(Self.sosOffCentre) })(); return d != null && d > 200;")
            try browser.script("document.getElementById('sos-show').click()")
            try browser.waitFor("the SOS in the map's middle", "const d = (() => { \(Self.sosOffCentre) })(); return d != null && d < 3;")
            let marker = "const m = document.querySelector('#street-map path.position').getBoundingClientRect(); const at = `${m.x},${m.y}`;"
            let before = try browser.script("\(marker) return at;") as? String ?? ""
            let later = Fix(latitude: sos.latitude + 0.0001, longitude: sos.longitude, accuracy: 5, timestamp: sos.timestamp + 4)
            try Self.send([later], token: token, app: app)
            try browser.waitFor("the marker at the newest position", "\(marker) return at !== '\(before)';")
            let stillThere = try browser.script("return (() => { \(Self.sosOffCentre) })()") as? Double
            #expect(stillThere.map { $0 < 3 } == true, "the SOS left the middle: \(String(describing: stillThere))")
            try Self.expectNoConsoleErrors(browser, "with the SOS live")
            // A viewer who opens the page after the SOS sees it too, with its place.
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            let late = try browser.waitFor("the SOS banner for a late viewer", timeout: 30, """
                return !document.getElementById('sos').hidden && document.querySelector('#street-map path.sos-marker')
                    ? document.getElementById('sos-text').textContent : null;
                """) as? String
            #expect(expected.contains(late ?? ""), "\(late ?? "")")
            try Self.expectNoConsoleErrors(browser, "for a late viewer")
        }
    }

    @Test func anSOSInsideAPrivacyZoneIsShownWithoutWhereUnlessTheViewerHasTheShareLink() async throws {
        try await BrowserTests.withBrowser { server, port, browser in
            let (ann, _) = try connectRunner("ann", to: server)
            try ann.send("privacy:200")
            try ann.expect("ok:privacy zone=200")
            try ann.send("share:")
            let share = try #require(try OkEvent(event: Event.parse(ann.expect("ok:share")))["token"])
            let token = try PhoneFixtures.deviceToken(ann)
            let app = try HTTPTestClient(port: port)
            // A few positions, all within 200 m of the start, and an SOS there.
            let fixes = Backlog.queue(count: 6, step: 2)
            try Self.send(fixes.dropLast(), token: token, app: app)
            let sos = fixes.last!
            #expect(try app.get(Self.osmAnd(sos, token: token, "&alarm=sos")).status == 200)
            try ann.expect("alert:ann kind=sos")

            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            let withheld = try browser.waitFor("the SOS without where", """
                return !document.getElementById('sos').hidden ? document.getElementById('sos-text').textContent : null;
                """) as? String
            #expect(Self.banners(sos.timestamp, where: " (where is withheld: the runner's privacy zone)").contains(withheld ?? ""),
                    "\(withheld ?? "")")
            #expect(try browser.script("""
                return [document.getElementById('sos-show'), document.getElementById('sos-geo')]
                    .map(e => e.hidden || e.getBoundingClientRect().height === 0);
                """) as? [Bool] == [true, true])
            #expect(try browser.script("return document.querySelectorAll('.sos-marker').length") as? Int == 0)
            try Self.expectNoConsoleErrors(browser, "without the share link")

            try browser.open("http://127.0.0.1:\(port)/runners/ann?token=\(share)")
            let shown = try browser.waitFor("the SOS with where", """
                const box = document.getElementById('sos');
                return !box.hidden && !document.getElementById('sos-show').hidden ? document.getElementById('sos-text').textContent : null;
                """) as? String
            #expect(Self.banners(sos.timestamp).contains(shown ?? ""), "\(shown ?? "")")
            #expect(try browser.script("return document.getElementById('sos-geo').getAttribute('href')") as? String
                    == "geo:\(sos.latitude),\(sos.longitude)")
            // The positions around it are withheld from the page (only the runner sees through the zone): no track
            // to place it by, yet "Show on the map" marks it.
            #expect(try browser.script("return document.querySelectorAll('svg#track path.segment').length") as? Int == 0)
            try browser.script("document.getElementById('sos-show').click()")
            try browser.waitFor("the SOS ring on the drawing", "return document.querySelector('svg#track .sos-marker') !== null")
            // The phone goes on: the track is drawn again (a new picture), the ring stays.
            try browser.script("document.querySelector('svg#track .map-background').dataset.old = 'yes'")
            let later = Fix(latitude: sos.latitude + 0.0002, longitude: sos.longitude, accuracy: 5, timestamp: sos.timestamp + 4)
            try Self.send([later], token: token, app: app)
            let ring = try browser.waitFor("the picture drawn again", """
                const background = document.querySelector('svg#track .map-background');
                return background && background.dataset.old !== 'yes' ? [document.querySelectorAll('svg#track .sos-marker').length] : null;
                """) as? [Int]
            #expect(ring == [1], "the SOS ring after the redraw: \(ring ?? [])")
            try Self.expectNoConsoleErrors(browser, "with the share link")
        }
    }

    @Test func theBatteryIsShownAndALowOneStandsOut() async throws {
        try await BrowserTests.withBrowser { server, port, browser in
            let (ann, _) = try connectRunner("ann", to: server)
            let token = try PhoneFixtures.deviceToken(ann)
            let app = try HTTPTestClient(port: port)
            let fixes = Backlog.queue(count: 12)
            try Self.send(fixes[..<4], token: token, app: app, "&batt=80")
            try ann.expect("alert:ann kind=battery ")
            // A viewer opening the page then sees the level the phone last said.
            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            let shown = try browser.waitFor("the battery", """
                const box = document.getElementById('battery-box'), level = document.getElementById('battery');
                return !box.hidden && box.getBoundingClientRect().height > 0 ? [level.textContent, level.classList.contains('low')] : null;
                """) as? [Any]
            #expect(shown?.first as? String == "80 %" && shown?.last as? Bool == false, "\(shown ?? [])")
            try Self.send(fixes[4..<8], token: token, app: app, "&batt=40")
            try browser.waitFor("the level going down", "return document.getElementById('battery').textContent === '40 %'")
            // Below 15%: the level in red, and said once in a toast.
            try Self.send(fixes[8...], token: token, app: app, "&batt=14")
            let low = try browser.waitFor("the low battery", """
                const level = document.getElementById('battery');
                const toasts = [...document.querySelectorAll('#toasts .toast')].map(t => t.textContent);
                return level.textContent === '14 %' && level.classList.contains('low') && toasts.length > 0
                    ? [getComputedStyle(level).color, toasts] : null;
                """) as? [Any]
            #expect(low?.first as? String == "rgb(255, 20, 44)", "\(low ?? [])")
            let toasts = low?.last as? [String] ?? []
            #expect(toasts.filter { $0.contains("battery low") }.count == 1 && toasts.contains { $0.contains("14 %") }, "\(toasts)")
            try Self.expectNoConsoleErrors(browser, "with the battery")
        }
    }

    @Test func theConnectAPhoneBoxListsThePhonesAndSaysWhatToChangeForEncryptedOwnTracks() async throws {
        try await BrowserTests.withBrowser { server, port, browser in
            let (ann, key) = try connectRunner("ann", to: server)
            try ann.send("device:Ann's Pixel")
            let pixel = try #require(try OkEvent(event: Event.parse(ann.expect("ok:device")))["token"])
            try ann.send("device:iPhone")
            let iPhone = try #require(try OkEvent(event: Event.parse(ann.expect("ok:device")))["token"])
            let app = try HTTPTestClient(port: port)
            let fix = Backlog.queue(count: 1)[0]
            let traccar = try app.get(Self.osmAnd(fix, token: pixel, "&batt=57"), headers: "User-Agent: Traccar Client/9.2\r\n")
            #expect(traccar.status == 200, "\(traccar)")
            let auth = "Authorization: \(HTTPBasicCredentials(user: "ann", password: iPhone).authorization)\r\n"
            try app.send(PhoneFixtures.json(#"{"_type":"encrypted","data":"q83vEjRWeJA="}"#, to: "/owntracks", headers: auth))
            #expect(try app.response().status == 200)

            try browser.open("http://127.0.0.1:\(port)/runners/ann")
            try browser.waitFor("the page", "return document.getElementById('status').textContent === 'live'")
            try browser.script("document.getElementById('runner-tools').open = true")
            // The runner gives the key and presses Enter, staying in the field: the phones are listed.
            try browser.type(key + "\u{E007}", into: "#runner-key", thenClick: "#runner-key")
            let phones = try #require(try browser.waitFor("both phones", """
                const items = [...document.querySelectorAll('#phone-list > li')];
                return !document.getElementById('phones').hidden && items.length === 2
                    ? items.map(i => [i.textContent, i.querySelector('.phone-warning') ? i.querySelector('.phone-warning').getBoundingClientRect().height : 0])
                    : null;
                """) as? [[Any]])
            let texts = phones.map { $0[0] as? String ?? "" }
            let pixelLine = try #require(texts.first { $0.hasPrefix("Ann's Pixel") }, "\(texts)")
            #expect(pixelLine.contains("Traccar Client") && pixelLine.contains("battery 57%") && pixelLine.contains("s ago"), "\(pixelLine)")
            let iPhoneIndex = try #require(texts.firstIndex { $0.hasPrefix("iPhone") }, "\(texts)")
            let iPhoneLine = texts[iPhoneIndex]
            #expect(iPhoneLine.contains("OwnTracks") && iPhoneLine.contains("encrypted") && iPhoneLine.contains("Encryption key"),
                    "\(iPhoneLine)")
            #expect((phones[iPhoneIndex][1] as? Double ?? 0) > 0, "the warning is not visible")
            #expect(!pixelLine.contains("encrypted"))
            try Self.expectNoConsoleErrors(browser, "in the phone box")
        }
    }
}
