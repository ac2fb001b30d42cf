@testable import Broadcaster
@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import Testing
import Wire

/// A phone's SOS through a real server: TCP coaches and the runner's page (its event stream) get it at once,
/// with an event id, and a page opened later gets it after the track.
@Suite(.mayBlock) struct DeviceAlertStreamTests {
    /// Raises ann's SOS on the server's loop, as the phone endpoints do.
    func raiseSOS(on server: Server, latitude: Double, longitude: Double, at time: Double) {
        server.loop.execute {
            guard let entry = server.core.value.hub.runners["ann"] else { return }
            let text = String(Int(time))
            server.core.value.decide { $0.raiseAlarm("sos", at: LocationCommand(latitude: latitude, longitude: longitude, accuracy: 5,
                                                             timestamp: time, timestampText: text),
                                  for: entry, now: time) }
            server.core.value.decide { $0.noteBattery(12, at: time, for: entry, now: time) }
        }
    }

    @Test func theRunnersPageAndCoachesGetTheSOSAtOnce() async throws {
        try await onItsOwnThread {
            try withServer { server in
                let web = try HTTPTestClient(port: try #require(server.httpPort))
                _ = try web.openStream("watch=ann")
                let coach = try TestClient(port: server.port)
                try coach.send("coach:ann")
                try coach.expectNext("ok:coach")
                let (ann, _) = try connectRunner("ann", to: server)
                let run = straightRun(count: 5)
                for line in run { try ann.send(line) }
                let last = run[run.count - 1].split(separator: ",").last!
                try ann.lines(until: "own pace") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
                let now = Date().timeIntervalSince1970
                raiseSOS(on: server, latitude: 51.51, longitude: -0.13, at: now)
                let line = try coach.expect("alert:ann kind=sos")
                #expect(line.contains("lat=51.5100000 lon=-0.1300000 ts=\(Int(now))"), "\(line)")
                #expect(try coach.expect("alert:ann kind=battery_low").hasSuffix("batt=12"))
                let events = try web.events(until: "alert").filter { $0.event == "alert" }
                let sos = try #require(events.first)
                #expect(sos.json["alert"] as? String == "sos" && sos.json["lat"] as? Double == 51.51 && sos.id != nil,
                        "\(sos)")
                // A page opened now: the track first, then the SOS and the battery, with their ids.
                let late = try HTTPTestClient(port: try #require(server.httpPort))
                _ = try late.openStream("watch=ann")
                #expect(try late.nextEvent().event == "track")
                let caughtUp = [try late.nextEvent(), try late.nextEvent()]
                #expect(caughtUp.map { $0.json["alert"] as? String } == ["sos", "battery_low"], "\(caughtUp)")
                #expect(caughtUp.first?.id == sos.id)
            }
        }
    }
}
