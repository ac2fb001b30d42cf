@testable import LiveCore
import Foundation
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// A phone's SOS and battery through the hub's hooks (the HTTP path calls them): who hears them, at once and
/// never droppable, once per alarm, and a privacy zone still hiding where the runner is from those without a
/// share token.
@Suite(.mayBlock) struct DeviceAlertTests {
    let store = MemoryRunStore()
    let output: AnsweringOutput
    let ann = ConnectionID(1), spectator = ConnectionID(2), coach = ConnectionID(3), friend = ConnectionID(4)
    let start = 1_700_000_000.0

    init() { output = AnsweringOutput(store: store) }

    func hub() -> HubDriver {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        for id in [ann, spectator, coach, friend] { hub.connected(id, now: start) }
        return hub
    }

    /// A position `index` seconds into the run, 3 m north of the one before.
    func location(_ index: Int) -> LocationCommand {
        LocationCommand(latitude: 51.5 + Double(index) * 3 / 111_229, longitude: -0.12, accuracy: 5,
                        timestamp: start + Double(index), timestampText: String(Int(start) + index))
    }

    func run(_ hub: HubDriver, _ range: Range<Int>) {
        for index in range { hub.received(.location(location(index)), from: ann, now: start + Double(index)) }
    }

    func alerts(_ id: ConnectionID) throws -> [AlertEvent] {
        try output.of(id).filter { $0.hasPrefix("alert:") }.map { try AlertEvent(line: $0) }
    }

    func entry(_ hub: HubDriver) throws -> RunnerEntry { try #require(hub.runners["ann"]) }

    @Test func anSOSBeforeAnyRunReachesCoachesAndSpectatorsOnceAndIsNeverDroppable() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.coach(.runner("ann")), from: coach, now: start)
        hub.received(.watch(.everyone), from: spectator, now: start)
        let sos = location(0)
        hub.raiseAlarm("sos", at: sos, for: try entry(hub), now: start)
        hub.raiseAlarm("sos", at: sos, for: try entry(hub), now: start + 5)  // resent: its answer was lost
        hub.raiseAlarm("general", at: location(1), for: try entry(hub), now: start + 6)  // not an SOS
        let expected = "alert:ann kind=sos dist=0.00 time=0.0 pace=- lat=51.5000000 lon=-0.1200000 ts=1700000000"
        for id in [coach, spectator, ann] {
            #expect(output.of(id).filter { $0.hasPrefix("alert:") } == [expected], "\(output.of(id))")
        }
        let event = try #require(try alerts(coach).first)
        #expect(event.alert == "sos" && event.latitude == 51.5 && event.longitude == -0.12 && event.timestamp == "1700000000")
    }

    @Test func anSOSIsNeverADroppableLine() throws {
        let recording = RecordingOutput()
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: recording)
        for id in [ann, coach] { hub.connected(id, now: start) }
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.coach(.runner("ann")), from: coach, now: start)
        run(hub, 0..<3)
        hub.raiseAlarm("sos", at: location(2), for: try entry(hub), now: start + 2)
        hub.noteBattery(10, at: start + 2, for: try entry(hub), now: start + 2)
        let sent = recording.lines.filter { $0.1.hasPrefix("alert:") }
        #expect(sent.count == 4 && sent.allSatisfy { $0.role == .event(about: "ann") }, "\(sent)")
    }

    @Test func anSOSInsideThePrivacyZoneShowsWhereOnlyToTheRunnerAndShareTokenHolders() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.privacyZone(200), from: ann, now: start)
        hub.received(.share(seconds: nil), from: ann, now: start)
        let token = try #require(try OkEvent(line: output.of(ann).last ?? "")["token"])
        hub.received(.coach(.runner("ann")), from: coach, now: start)
        hub.received(.watch(.runner("ann"), token: token), from: friend, now: start)
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        run(hub, 0..<20)
        // 57 m from the start: inside the zone.
        hub.raiseAlarm("sos", at: location(19), for: try entry(hub), now: start + 19)
        for id in [coach, spectator] {
            let sos = try #require(try alerts(id).last)
            #expect(sos.alert == "sos" && sos.latitude == nil && sos.longitude == nil && sos.timestamp == String(Int(start) + 19))
        }
        for id in [ann, friend] { #expect(abs((try alerts(id).last?.latitude ?? 0) - location(19).latitude) < 1e-7) }
        // 360 m from the start, the run past the zone: everyone sees where.
        run(hub, 20..<120)
        hub.raiseAlarm("sos", at: location(119), for: try entry(hub), now: start + 119)
        for id in [ann, spectator, coach, friend] {
            let sos = try #require(try alerts(id).last)
            #expect(abs((sos.latitude ?? 0) - location(119).latitude) < 1e-7 && sos.distance > 300, "\(sos)")
        }
    }

    @Test func aPrivateRunnersSOSReachesOnlyThoseWhoMayFollowIt() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.setPrivate(true), from: ann, now: start)
        hub.received(.share(seconds: nil), from: ann, now: start)
        let token = try #require(try OkEvent(line: output.of(ann).last ?? "")["token"])
        hub.received(.coach(.everyone), from: coach, now: start)
        hub.received(.coach(.runner("ann"), token: token), from: friend, now: start)
        run(hub, 0..<5)
        hub.raiseAlarm("sos", at: location(4), for: try entry(hub), now: start + 4)
        #expect(try alerts(coach).isEmpty)
        #expect(try alerts(friend).map(\.alert) == ["sos"])
    }

    @Test func batteryIsKeptPerRunAndLowIsRaisedOnceUntilItRecovers() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.coach(.runner("ann"), every: 100), from: coach, now: start)
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        run(hub, 0..<5)
        let levels: [Double] = [50, 48, 44, 30, 14.6, 14.2, 10, 16, 19, 21, 12, 60]
        for (index, level) in levels.enumerated() {
            hub.noteBattery(level, at: start + 5 + Double(index), for: try entry(hub), now: start + 5 + Double(index))
        }
        hub.noteBattery(90, at: start, for: try entry(hub), now: start + 20)  // an older position's: ignored
        let expected: [(String, Double)] = [("battery", 50), ("battery", 44), ("battery", 30), ("battery_low", 14.6),
                                            ("battery", 21), ("battery_low", 12), ("battery", 60)]
        for id in [coach, spectator, ann] {
            let got = try alerts(id).map { ($0.alert, $0.battery ?? -1) }
            #expect(got.map(\.0) == expected.map(\.0) && got.map(\.1) == expected.map { $0.1.rounded() }, "\(got)")
        }
        #expect(try entry(hub).run?.battery?.level == 60)
        // The coaches' other alerts carry the level too.
        run(hub, 5..<40)
        let checkpoint = try #require(try alerts(coach).first { $0.alert == "checkpoint" })
        #expect(checkpoint.battery == 60)
        // A late follower gets the latest battery alert at once.
        let late = ConnectionID(9)
        hub.connected(late, now: start + 40)
        hub.received(.coach(.runner("ann")), from: late, now: start + 40)
        #expect(try alerts(late).map(\.alert) == ["battery"])
    }

    @Test func aLateFollowerSeesTheRunsSOS() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        run(hub, 0..<5)
        hub.raiseAlarm("sos", at: location(4), for: try entry(hub), now: start + 4)
        hub.received(.watch(.runner("ann")), from: spectator, now: start + 5)
        #expect(try alerts(spectator).map(\.alert) == ["sos"])
        #expect(output.of(spectator).first { $0.hasPrefix("alert:") }?.contains("lat=51.5001079") == true)
    }
}
