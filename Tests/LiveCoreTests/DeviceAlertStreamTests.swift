@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import Testing
import Wire

/// A phone's SOS, decided by the live core: TCP coaches and the runner's page (its event stream) get it at once,
/// with an event id, and a page opened later gets it after the track.
@Suite struct DeviceAlertStreamTests {
    /// Raises ann's SOS, as the phone endpoints do.
    func raiseSOS(on server: PureServer, latitude: Double, longitude: Double, at time: Double) throws {
        let entry = try #require(server.driver.runners["ann"])
        let location = LocationCommand(latitude: latitude, longitude: longitude, accuracy: 5, timestamp: time,
                                       timestampText: String(Int(time)))
        server.driver.raiseAlarm("sos", at: location, for: entry, now: time)
        server.driver.noteBattery(12, at: time, for: entry, now: time)
        server.settle()
    }

    @Test func theRunnersPageAndCoachesGetTheSOSAtOnce() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let web = server.web()
                _ = try web.openStream("watch=ann")
                let coach = server.connect()
                try coach.send("coach:ann")
                try coach.expectNext("ok:coach")
                let (ann, _) = try connectRunner("ann", to: server)
                let run = straightRun(count: 5)
                for line in run { try ann.send(line) }
                let last = run[run.count - 1].split(separator: ",").last!
                try ann.lines(until: "own pace") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
                let now = server.now
                try raiseSOS(on: server, latitude: 51.51, longitude: -0.13, at: now)
                let line = try coach.expect("alert:ann kind=sos")
                #expect(line.contains("lat=51.5100000 lon=-0.1300000 ts=\(Int(now))"), "\(line)")
                #expect(try coach.expect("alert:ann kind=battery_low").hasSuffix("batt=12"))
                let events = try web.events(until: "alert").filter { $0.event == "alert" }
                let sos = try #require(events.first)
                #expect(sos.json["alert"] as? String == "sos" && sos.json["lat"] as? Double == 51.51 && sos.id != nil,
                        "\(sos)")
                // A page opened now: the track first, then the SOS and the battery, with their ids.
                let late = server.web()
                _ = try late.openStream("watch=ann")
                #expect(try late.nextEvent().event == "track")
                let caughtUp = [try late.nextEvent(), try late.nextEvent()]
                #expect(caughtUp.map { $0.json["alert"] as? String } == ["sos", "battery_low"], "\(caughtUp)")
                #expect(caughtUp.first?.id == sos.id)
            }
        }
    }
}
