@testable import LiveCore
import Foundation
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

@Suite(.mayBlock) struct HubTests {
    let output = RecordingOutput()
    let store = MemoryRunStore()
    let runner = ConnectionID(1), spectator = ConnectionID(2), coach = ConnectionID(3)
    let start = 1_700_000_000.0

    func hub(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> HubDriver {
        var configuration = ServerConfiguration()
        configure(&configuration)
        let hub = HubDriver(configuration: configuration, store: store, output: output)
        for id in [runner, spectator, coach] { hub.connected(id, now: start) }
        return hub
    }

    @Test func followingANameAgainAtTheCapIsNotRefused() {
        let hub = hub { $0.maximumFollowedRunners = 2 }
        for name in ["ann", "bob", "ann"] { hub.received(.watch(.runner(name)), from: spectator, now: start) }
        hub.received(.watch(.runner("cat")), from: spectator, now: start)
        #expect(output.kinds(for: spectator) == ["ok", "ok", "ok", "err"], "\(output.lines)")
    }

    func fix(_ index: Int) -> Command {
        .location(LocationCommand(latitude: 51.5 + Double(index) * 3 / 111_229, longitude: -0.12, accuracy: 5,
                                  timestamp: start + Double(index), timestampText: String(Int(start) + index)))
    }

    @Test func aRunReachesTheRunnerSpectatorsAndCoachesAsEachRoleShould() {
        let hub = hub()
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.received(.coach(.everyone), from: coach, now: start)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        for index in 0..<5 { hub.received(fix(index), from: runner, now: start + Double(index)) }
        hub.received(.stop(save: true), from: runner, now: start + 5)

        #expect(output.kinds(for: runner).filter { $0 == "pace" }.count == 5)
        #expect(output.kinds(for: spectator).filter { $0 == "pace" }.count == 5)
        #expect(!output.kinds(for: coach).contains("pace"))
        #expect(output.kinds(for: coach).first { $0 != "ok" } == "run" && output.kinds(for: coach).last == "end")
        let droppable = output.lines.filter { if case .pace = $0.role { true } else { false } }.map { $0.1 }
        #expect(droppable.count == 10 && droppable.allSatisfy { $0.hasPrefix("pace:ann") }, "only pace lines may be conflated")
    }

    /// The output keeps a slow reader's order per runner by the role each line is sent with (an event stream's
    /// frame no longer starts with the runner's name): every event of ann's run says it is about ann, every
    /// reply says it is about nobody.
    @Test func everyLineSaysWhichRunnerItIsAbout() {
        let hub = hub()
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        for index in 0..<5 { hub.received(fix(index), from: runner, now: start + Double(index)) }
        hub.received(.stop(save: true), from: runner, now: start + 5)
        for (_, line, role) in output.lines {
            let kind = line.prefix { $0 != ":" }
            switch kind {
            case "pace": #expect(role == .pace(of: "ann"), "\(line)")
            case "run", "badge", "split", "end": #expect(role == .event(about: "ann"), "\(line)")
            default: #expect(role == .reply, "\(line)")
            }
        }
        #expect(output.lines.contains { $0.1.hasPrefix("end:ann") && $0.role == .event(about: "ann") })
    }

    /// Peers are written in the order they got output in a turn, so the runner's own copy of an event is sent
    /// after its watchers' (they are the ones waiting for it).
    @Test func watchersGetAnEventBeforeTheRunnersOwnCopy() {
        let hub = hub()
        let everyone = ConnectionID(4)
        hub.connected(everyone, now: start)
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.received(.watch(.everyone), from: everyone, now: start)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        for index in 0..<3 {
            output.lines.removeAll()
            hub.received(fix(index), from: runner, now: start + Double(index))
            let pace = output.lines.filter { $0.1.hasPrefix("pace:") }.map(\.0)
            #expect(pace == [spectator, everyone, runner], "fix \(index)")
        }
    }

    @Test func aDisconnectedRunEndsWhenTheResumeWindowCloses() {
        let hub = hub { $0.resumeWindow = 60 }
        hub.received(.coach(.runner("ann")), from: coach, now: start)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        for index in 0..<3 { hub.received(fix(index), from: runner, now: start + Double(index)) }
        hub.disconnected(runner, now: start + 3)
        hub.tick(now: start + 62)
        #expect(!output.kinds(for: coach).contains("end"), "still inside the window")
        hub.tick(now: start + 64)
        let end = output.lines.last { $0.0 == coach && $0.1.hasPrefix("end:") }.map { try? RunEndedEvent(line: $0.1) }
        #expect(end??.reason == .timeout && end??.saved == true)
    }

    @Test func silentConnectionsAreClosedOnceAfterTheIdleTimeout() {
        let hub = hub { $0.idleTimeout = 30 }
        hub.received(.ping, from: spectator, now: start + 1)
        hub.tick(now: start + 31)
        hub.tick(now: start + 32)
        #expect(output.closed.sorted() == [runner, coach])
        #expect(output.kinds(for: runner) == ["err"])
    }
}
