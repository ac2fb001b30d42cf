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
