import LiveCore
import MoonRunnerTestSupport
import Testing
import Wire

/// Two runners, spectators and coaches at once: each role gets exactly its events.
@Suite struct RoleTests {
    /// Everything a client received up to its answer to a final `ping:`.
    func drain(_ client: PureClient) throws -> [String] {
        try client.send("ping:")
        try client.lines(until: "ok:ping") { $0 == "ok:ping" }
        return client.received
    }

    func kinds(_ lines: [String], about runner: String) -> [String] {
        lines.compactMap { line in
            guard let event = try? Event.parse(line), event.subject == runner else { return nil }
            return event.kind
        }
    }

    @Test func eachRoleGetsExactlyItsEvents() throws {
        try withPureServer { server in
            let spectatorOfAnn = try server.connect()
            let spectatorOfAll = try server.connect()
            let coachOfAnn = try server.connect()
            let coachOfAll = try server.connect()
            try spectatorOfAnn.send("watch:ann")
            try spectatorOfAnn.expectNext("ok:watch")
            try spectatorOfAll.send("watch:*")
            try spectatorOfAll.expectNext("ok:watch")
            try coachOfAnn.send("coach:ann")
            try coachOfAnn.expectNext("ok:coach")
            try coachOfAll.send("coach:*")
            try coachOfAll.expectNext("ok:coach")

            let (ann, _) = try connectRunner("ann", to: server)
            let (bob, _) = try connectRunner("bob", to: server)
            for line in straightRun(count: 6) { try ann.send(line) }
            for line in straightRun(count: 4, longitude: 2.35) { try bob.send(line) }
            try ann.send("stop:")
            try bob.send("stop:")
            try ann.expect("end:ann")
            try bob.expect("end:bob")
            try spectatorOfAll.lines(until: "both ends") { _ in
                spectatorOfAll.received.contains { $0.hasPrefix("end:ann") } && spectatorOfAll.received.contains { $0.hasPrefix("end:bob") }
            }

            let annSees = kinds(try drain(ann), about: "ann")
            #expect(annSees.filter { $0 == "pace" }.count == 6)
            #expect(annSees.first == "run" && annSees.contains("end"))
            #expect(kinds(try drain(ann), about: "bob").isEmpty)

            let watcherLines = try drain(spectatorOfAnn)
            #expect(kinds(watcherLines, about: "ann").filter { $0 == "pace" }.count == 6)
            #expect(kinds(watcherLines, about: "ann").contains("end"))
            #expect(kinds(watcherLines, about: "bob").isEmpty)

            let allLines = try drain(spectatorOfAll)
            #expect(kinds(allLines, about: "ann").filter { $0 == "pace" }.count == 6)
            #expect(kinds(allLines, about: "bob").filter { $0 == "pace" }.count == 4)

            let coachLines = try drain(coachOfAnn)
            let coachKinds = kinds(coachLines, about: "ann")
            #expect(coachKinds.first == "run" && coachKinds.last == "end")
            #expect(Set(coachKinds).isSubset(of: ["run", "badge", "end"]))
            #expect(kinds(coachLines, about: "bob").isEmpty)

            let allCoachLines = try drain(coachOfAll)
            for runner in ["ann", "bob"] {
                let seen = kinds(allCoachLines, about: runner)
                #expect(seen.contains("run") && seen.contains("end"), "coach:* sees \(runner)")
                #expect(Set(seen).isSubset(of: ["run", "badge", "end"]))
            }
        }
    }

    @Test func aLateSpectatorGetsTheRunItsBadgesAndLatestPaceAtOnce() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            let run = straightRun(count: 5)
            for line in run { try ann.send(line) }
            let lastTimestamp = run.last!.split(separator: ",").last!
            try ann.lines(until: "pace of the last fix") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(lastTimestamp)") }
            let late = try server.connect()
            try late.send("watch:ann")
            try late.expectNext("ok:watch")
            try late.expectNext("run:ann")
            #expect(try BadgeEvent(event: Event.parse(late.expectNext("badge:ann"))).badgeID == "earth")
            let pace = try PaceEvent(event: Event.parse(late.expectNext("pace:ann")))
            #expect(pace.timestamp == String(lastTimestamp))
        }
    }

    @Test func aWatcherAlsoWatchingEveryoneGetsEachEventOnce() throws {
        try withPureServer { server in
            let spectator = try server.connect()
            try spectator.send("watch:ann")
            try spectator.expectNext("ok:watch")
            try spectator.send("watch:*")
            try spectator.expectNext("ok:watch")
            try spectator.send("coach:ann")
            try spectator.expectNext("ok:coach")
            let (ann, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 3) { try ann.send(line) }
            try ann.send("stop:")
            try spectator.expect("end:ann")
            let all = kinds(try drain(spectator), about: "ann")
            #expect(all.filter { $0 == "run" }.count == 1)
            #expect(all.filter { $0 == "pace" }.count == 3)
            #expect(all.filter { $0 == "end" }.count == 1)
        }
    }

    @Test func cheersReachTheRunnerAndItsWatchersTaggedWithTheSender() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 2) { try ann.send(line) }
            try ann.expect("pace:ann")
            let fan = try server.connect()
            try fan.send("iam:fan")
            try fan.expect("ok:iam")
            try fan.send("watch:ann")
            try fan.expect("ok:watch")
            let other = try server.connect()
            try other.send("watch:ann")
            try other.expect("ok:watch")
            try fan.send("msg:go ann go!")
            let toRunner = try CheerEvent(event: Event.parse(ann.expect("msg:ann")))
            #expect(toRunner.from == "fan" && toRunner.text == "go ann go!")
            let toOther = try CheerEvent(event: Event.parse(other.expect("msg:ann")))
            #expect(toOther.from == "fan")
            try fan.expect("ok:msg")

            let anonymous = try server.connect()
            try anonymous.send("watch:ann")
            try anonymous.expect("ok:watch")
            try anonymous.send("msg:hi")
            #expect(try CheerEvent(event: Event.parse(ann.expect("msg:ann"))).from == "anon")

            try ann.send("msg:thanks all")
            try other.lines(until: "the runner's cheer") { $0.hasPrefix("msg:ann from=ann ") }
            try ann.expect("ok:msg")
            #expect(!ann.received.contains { $0.hasPrefix("msg:ann from=ann") }, "no echo to the sender")

            let nobody = try server.connect()
            try nobody.send("msg:hello?")
            #expect(try nobody.expectNext("err:").hasPrefix("err:not_found"))
        }
    }
}
