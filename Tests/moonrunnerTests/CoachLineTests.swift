import Foundation
@testable import moonrunner
import MoonRunnerClient
import MoonRunnerTestSupport
import Reactor
import Testing
import Wire

/// The coach and watch tools say what happened in one line each.
@Suite(.mayBlock) struct CoachLineTests {
    let formatter = RunFormatter(locale: Locale(identifier: "en_GB"), unit: .kilometres)

    func badge(_ id: String, _ tier: String, at timestamp: Double) -> BadgeEvent {
        BadgeEvent(runner: "ann", badgeID: id, badgeName: id == "moon" ? "The Moon" : "Mars", tier: tier,
                   distance: 1609.34, elapsed: 512, speed: 3.143, latitude: 48.8, longitude: 2.3, timestamp: timestamp)
    }

    @Test func theTiersOfOneCrossingMakeOneLine() {
        var merger = BadgeLineMerger()
        #expect(merger.add(badge("moon", "silver", at: 10), formatter: formatter) == nil)
        #expect(merger.add(badge("moon", "gold", at: 10), formatter: formatter) == nil)
        #expect(merger.add(badge("moon", "best", at: 10), formatter: formatter) == nil)
        // The next crossing closes the line of the one before.
        let line = merger.add(badge("mars", "earned", at: 900), formatter: formatter)
        #expect(line == "ann won The Moon (silver, gold, best) at 1.61 km, 0:08:32")
        #expect(merger.flush(formatter: formatter)?.hasPrefix("ann won Mars at ") == true)
        #expect(merger.flush(formatter: formatter) == nil)
    }

    @Test func watchingWithoutAServerSaysItCannotConnect() async throws {
        // A port nobody listens on: bind one, then close it.
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let port = listener.port
        listener.close()
        let watch = try ChildProcess(["watch", "ann", "--port", String(port), "--duration", "1.5"])
        _ = await exitStatus(watch, timeout: 30)
        #expect(watch.standardOutput.contains("cannot connect to 127.0.0.1:\(port): connection refused"),
                "\(watch.standardOutput)")
        #expect(watch.standardOutput.contains("Ctrl-C to stop"))
        #expect(!watch.standardOutput.contains("connection lost"))
    }
}

/// A phone's alerts in `moonrunner coach`: an SOS stands out, with when, where and a map link.
@Suite struct PhoneAlertLineTests {
    let formatter = RunFormatter(locale: Locale(identifier: "en_GB"), unit: .kilometres)

    @Test func anSOSStandsOutWithTheTimeThePositionAndAMapLink() throws {
        let sos = try AlertEvent(line: "alert:ann kind=sos dist=4210.50 time=1500.0 pace=- lat=48.8566140 lon=2.3522190 ts=1732951500 batt=57")
        let lines = alertLine(sos, formatter: formatter).split(separator: "\n").map(String.init)
        #expect(lines == ["!!! SOS ann at 2024-11-30T07:25:00Z, 48.85661, 2.35222 "
                              + "https://www.openstreetmap.org/?mlat=48.85661&mlon=2.35222#map=17/48.85661/2.35222",
                          "!!! ann had run 4.21 km at 0:25:00, battery 57%"])
        let withheld = try AlertEvent(line: "alert:ann kind=sos dist=0.00 time=0.0 pace=- lat=- lon=- ts=1732950000")
        #expect(alertLine(withheld, formatter: formatter)
                == "!!! SOS ann at 2024-11-30T07:00:00Z, position withheld (privacy zone: ask ann for a share link)")
        #expect(sos.phoneAlert == .sos(runner: "ann", latitude: 48.856614, longitude: 2.352219, time: 1_732_951_500))
        var view = WatchView(title: "watching ann", formatter: formatter)
        #expect(view.apply(.alert(sos))?.hasPrefix("!!! SOS ann at ") == true)
    }

    @Test func batteryLinesSayTheLevel() throws {
        let low = try AlertEvent(line: "alert:ann kind=battery_low dist=9000.00 time=2900.0 pace=- batt=14")
        #expect(alertLine(low, formatter: formatter) == "ann: battery low, 14%")
        #expect(low.phoneAlert == .batteryLow(runner: "ann", level: 14))
        let level = try AlertEvent(line: "alert:ann kind=battery dist=100.00 time=30.0 pace=- batt=80")
        #expect(alertLine(level, formatter: formatter) == "ann: battery 80%")
        let checkpoint = try AlertEvent(line: "alert:ann kind=checkpoint dist=2000.00 time=598.9 pace=297.5 batt=41")
        #expect(alertLine(checkpoint, formatter: formatter).hasSuffix(", battery 41%"))
        var view = WatchView(title: "watching ann", formatter: formatter)
        #expect(view.apply(.alert(level)) == nil, "a level is no news for a spectator's log")
    }

    /// A runner on a course: coaches hear of a detour in words, spectators see the km to go and the next point.
    @Test func courseLinesSayTheDetourAndWhatIsAhead() throws {
        let off = try AlertEvent(line: "alert:ann kind=off_course dist=21400.00 time=6400.0 pace=310.0 off=84")
        #expect(alertLine(off, formatter: formatter) == "ann: off the course, \(formatter.distance(84)) from it, "
            + "\(formatter.distance(21_400)) at \(formatter.duration(6400))")
        let back = try AlertEvent(line: "alert:ann kind=back_on_course dist=21900.00 time=6560.0 pace=305.0")
        #expect(alertLine(back, formatter: formatter).hasPrefix("ann: back on the course, "))
        var view = WatchView(title: "watching ann", formatter: formatter)
        let pace = try PaceEvent(line: "pace:ann dist=10051.20 time=3100.0 moving=3000.0 pace=298.5 cur=300.0 lat=52.5145000 "
            + "lon=13.3501000 ts=1732953100 next=callisto left=1214.21 along=10012.50 togo=32182.50 next_point=\"Aid 3\" "
            + "next_point_eta=1732954600")
        #expect(view.apply(.pace(pace)) == nil)
        #expect(view.courseLine(pace) == "\(formatter.distance(32_182.5, decimals: 1)) to go, Aid 3 in \(formatter.duration(1500))")
        #expect(view.screen(height: 40).contains("    " + (view.courseLine(pace) ?? "")))
        let point = try PointEvent(line: "point:ann name=\"Aid 3\" along=15000.00 ts=1732954602 time=4602.0")
        #expect(view.apply(.point(point)) == "ann passed Aid 3 at \(formatter.distance(15_000)), \(formatter.duration(4602))")
    }
}
