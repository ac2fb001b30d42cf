@testable import Broadcaster
import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import RunCore
import Testing
import Wire

/// A phone's SOS and battery through the client library, against the real server: typed for a coach and for a
/// spectator alike.
@Suite(.mayBlock) struct ClientPhoneAlertTests {
    @Test func aCoachAndASpectatorGetTheSOSAndTheLowBatteryTyped() async throws {
        try await withServer { server in
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let coach = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let spectator = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { [runner, coach, spectator].forEach { $0.close() } }
            let coached = EventRecorder(coach)
            let watched = EventRecorder(spectator)
            try coach.coach("ann")
            try spectator.watch("ann")
            try await coached.first("ok:coach") { if case .ok(let ok) = $0 { ok.what == "coach" } else { false } }
            try await watched.first("ok:watch") { if case .ok(let ok) = $0 { ok.what == "watch" } else { false } }
            try await runner.join(name: "ann")
            for fix in straightFixes(count: 5, speed: 3) { try runner.send(fix) }
            try await watched.first("a pace") { if case .pace = $0 { true } else { false } }
            let time = Double(Int(Date().timeIntervalSince1970))
            server.loop.execute {
                guard let entry = server.core.value.hub.runners["ann"] else { return }
                let at = LocationCommand(latitude: 51.51, longitude: -0.13, accuracy: 5, timestamp: time,
                                         timestampText: String(Int(time)))
                server.core.value.decide { $0.raiseAlarm("sos", at: at, for: entry, now: time) }
                server.core.value.decide { $0.noteBattery(14, at: time, for: entry, now: time) }
            }
            for recorder in [coached, watched] {
                let sos = try await recorder.first("the SOS") {
                    if case .alert(let alert) = $0 { alert.alertKind == .sos } else { false }
                }
                guard case .alert(let alert) = sos else { return }
                #expect(alert.phoneAlert == .sos(runner: "ann", latitude: 51.51, longitude: -0.13, time: time))
                let low = try await recorder.first("the low battery") {
                    if case .alert(let alert) = $0 { alert.alertKind == .batteryLow } else { false }
                }
                guard case .alert(let lowAlert) = low else { return }
                #expect(lowAlert.phoneAlert == .batteryLow(runner: "ann", level: 14))
            }
        }
    }
}
