import Foundation
import MoonRunnerClient
@testable import moonrunner
import Synchronization
import Testing
import Wire

/// What `simulate` shows while it runs, fed the events a runner's connection gets, in each style.
@Suite struct SimulateProgressTests {
    let formatter = RunFormatter(locale: Locale(identifier: "en_GB"), unit: .kilometres)

    /// Everything written, standard output and (marked) standard error, in order.
    final class Written: Sendable {
        private let text = Mutex("")
        var value: String { text.withLock { $0 } }
        func append(_ more: String) { text.withLock { $0 += more } }
    }

    /// Progress in `style` writing into `written`; every pace update redrawn unless `redrawInterval` says.
    func progress(_ style: SimulateProgressStyle, into written: Written,
                  redrawInterval: Duration = .zero) -> SimulateProgress {
        SimulateProgress(style: style, formatter: formatter, redrawInterval: redrawInterval,
                         write: { written.append($0) }, writeError: { written.append("<stderr>\($0)\n") })
    }

    func pace(_ runner: String, metres: Double, seconds: Double) -> ClientEvent {
        .pace(PaceEvent(runner: runner, distance: metres, elapsed: seconds, moving: seconds, pace: nil, current: nil,
                        latitude: 51.5, longitude: -0.15, timestamp: "1796010000", nextBadge: nil, left: 0))
    }

    func badge(_ runner: String, _ id: String, _ name: String, tier: String = "earned") -> ClientEvent {
        .badge(BadgeEvent(runner: runner, badgeID: id, badgeName: name, tier: tier, distance: 0, elapsed: 0, speed: 0,
                          latitude: nil, longitude: nil, timestamp: 1_796_010_000))
    }

    func split(_ runner: String, _ unit: String, _ number: Int, elapsed: Double) -> ClientEvent {
        .split(SplitEvent(runner: runner, unit: unit, number: number, duration: 330, pace: 330, elapsed: elapsed))
    }

    @Test func pipedALineForEachKilometreWithTheTimeAndTheBadgesSoFar() {
        let written = Written()
        let progress = progress(.perSplit, into: written)
        progress.say("ann key=0123")
        progress.take(pace("ann", metres: 0, seconds: 0))
        progress.take(badge("ann", "earth", "Earth"))
        progress.take(pace("ann", metres: 999, seconds: 330))
        progress.take(badge("ann", "atmosphere", "Atmosphere"))
        progress.take(split("ann", "km", 1, elapsed: 331.2))
        progress.take(split("ann", "mi", 1, elapsed: 533))  // not the formatter's unit
        progress.take(badge("ann", "atmosphere", "Atmosphere", tier: "best"))  // a tier of the same badge
        progress.take(split("ann", "km", 2, elapsed: 662))
        progress.end("ann", summary: "ann: 2.10 km in 0:11:40 (5:33 /km), saved as run 1")
        progress.take(split("ann", "km", 3, elapsed: 990))  // after the end: nothing
        #expect(written.value == """
            ann key=0123
            ann: 1 km in 0:05:31, 2 badges (latest Atmosphere)
            ann: 2 km in 0:11:02, 2 badges (latest Atmosphere)
            ann: 2.10 km in 0:11:40 (5:33 /km), saved as run 1

            """)
    }

    @Test func onATerminalOneLineIsRedrawnInPlaceAndMakesWayForLinesThatStay() {
        let written = Written()
        let progress = progress(.liveLine(width: 80), into: written)
        progress.say("ann key=0123")
        progress.take(pace("ann", metres: 12.4, seconds: 5))
        progress.take(badge("ann", "earth", "Earth"))
        progress.take(split("ann", "km", 1, elapsed: 331))  // a terminal has the live line instead
        progress.take(pace("ann", metres: 1012.4, seconds: 336))
        progress.warn("ann: no connection to 127.0.0.1:4242")
        progress.end("ann", summary: "ann: 1.01 km in 0:05:36 (5:32 /km), saved as run 1")
        progress.take(pace("ann", metres: 1013, seconds: 337))  // a late update: the line stays cleared
        #expect(written.value == "ann key=0123\n"
            + "\rann: 0.01 km in 0:00:05\u{1B}[K"
            + "\rann: 0.01 km in 0:00:05, 1 badge (latest Earth)\u{1B}[K"
            + "\rann: 1.01 km in 0:05:36, 1 badge (latest Earth)\u{1B}[K"
            + "\r\u{1B}[K<stderr>ann: no connection to 127.0.0.1:4242\n"
            + "\rann: 1.01 km in 0:05:36, 1 badge (latest Earth)\u{1B}[K"
            + "\r\u{1B}[Kann: 1.01 km in 0:05:36 (5:32 /km), saved as run 1\n")
    }

    @Test func aCrowdsLineShowsTheRunnerFarthestOnAndFitsTheTerminal() {
        let written = Written()
        let progress = progress(.liveLine(width: 40), into: written)
        progress.take(pace("crowd-1", metres: 2000, seconds: 600))
        progress.take(pace("crowd-2", metres: 2600, seconds: 598))
        progress.take(pace("crowd-3", metres: 2400, seconds: 596))
        let last = written.value.components(separatedBy: "\r").last!
        // "3 running, farthest crowd-2: 2.60 km in 0:09:58" cut to 39 characters: a line that wrapped could not
        // be redrawn in place.
        #expect(last == "3 running, farthest crowd-2: 2.60 km in\u{1B}[K")
    }

    @Test func paceUpdatesAreRedrawnAtMostOncePerIntervalButABadgeAtOnce() {
        let written = Written()
        let progress = progress(.liveLine(width: 80), into: written, redrawInterval: .seconds(3600))
        progress.take(pace("ann", metres: 10, seconds: 3))
        progress.take(pace("ann", metres: 20, seconds: 6))
        progress.take(badge("ann", "earth", "Earth"))
        #expect(written.value == "\rann: 0.01 km in 0:00:03\u{1B}[K"
            + "\rann: 0.02 km in 0:00:06, 1 badge (latest Earth)\u{1B}[K")
    }

    @Test func quietShowsOnlyKeysAndSummaries() {
        let written = Written()
        let progress = progress(.none, into: written)
        progress.say("ann key=0123")
        progress.take(pace("ann", metres: 999, seconds: 330))
        progress.take(badge("ann", "earth", "Earth"))
        progress.take(split("ann", "km", 1, elapsed: 331))
        progress.end("ann", summary: "ann: done")
        #expect(written.value == "ann key=0123\nann: done\n")
    }
}
