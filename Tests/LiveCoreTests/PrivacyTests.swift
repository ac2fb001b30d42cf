@testable import LiveCore
import Foundation
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// Private runners and share links through the hub: invisible to others exactly as a missing name is, visible
/// to the runner and to holders of a live share token, and a revoked or expired token stops at once.
@Suite(.mayBlock) struct PrivacyTests {
    let store = MemoryRunStore()
    let output: AnsweringOutput
    let ann = ConnectionID(1), other = ConnectionID(2), control = ConnectionID(3), friend = ConnectionID(4)
    let start = 1_700_000_000.0

    init() { output = AnsweringOutput(store: store) }

    func hub() -> HubDriver {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        for id in [ann, other, control, friend] { hub.connected(id, now: start) }
        return hub
    }

    func fix(_ index: Int) -> Command {
        .location(LocationCommand(latitude: 51.5 + Double(index) * 3 / 111_229, longitude: -0.12, accuracy: 5,
                                  timestamp: start + Double(index), timestampText: String(Int(start) + index)))
    }

    /// ann claims her name, goes private, and runs `seconds` fixes; her run's id.
    func privateRun(_ hub: HubDriver, seconds: Int = 30) throws -> Int64 {
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.setPrivate(true), from: ann, now: start)
        #expect(output.of(ann).last == "ok:private private=yes")
        for index in 0..<seconds { hub.received(fix(index), from: ann, now: start + Double(index)) }
        let started = try #require(output.of(ann).first { $0.hasPrefix("run:") })
        return try RunStartedEvent(line: started).runID
    }

    /// What a connection gets for each question about `name`, with the name written as NAME.
    func answers(_ hub: HubDriver, about name: String, runID: Int64, from id: ConnectionID) -> [String] {
        let before = output.lines.count
        for command: Command in [.watch(.runner(name)), .coach(.runner(name), every: 100), .watch(.everyone),
                                 .coach(.everyone), .listRuns(name: name, offset: 0, limit: 5), .showBadges(name: name),
                                 .showRun(id: runID), .leaders(goal: nil), .cheer("go")] {
            hub.received(command, from: id, now: start + 40)
        }
        for index in 30..<40 { hub.received(fix(index), from: ann, now: start + Double(index)) }
        return output.lines[before...].filter { $0.0 == id }.map { $0.1.replacingOccurrences(of: name, with: "NAME") }
    }

    @Test func aPrivateRunnerIsIndistinguishableFromAMissingOne() throws {
        let hub = hub()
        let runID = try privateRun(hub)
        // The same questions about ann (private, running) and about a name nobody has, and a run id nobody has.
        let aboutAnn = answers(hub, about: "ann", runID: runID, from: other)
        let aboutNobody = answers(hub, about: "zed", runID: runID + 1000, from: control)
            .map { $0.replacingOccurrences(of: String(runID + 1000), with: String(runID)) }
        #expect(aboutAnn == aboutNobody.map { $0.replacingOccurrences(of: String(runID + 1000), with: String(runID)) })
        #expect(!aboutAnn.contains { $0.hasPrefix("run:") || $0.hasPrefix("pace:") || $0.hasPrefix("leader:") })
        #expect(aboutAnn.contains { $0.hasPrefix("err:not_found") }, "runs:, badges:, run: as for nobody: \(aboutAnn)")
        // ann herself sees her run, her history and her place.
        hub.received(.listRuns(name: "ann", offset: 0, limit: 5), from: ann, now: start + 41)
        #expect(output.of(ann).last == "done:runs count=1 more=no")
        hub.received(.showRun(id: runID), from: ann, now: start + 41)
        #expect(output.of(ann).last?.hasPrefix("done:run ") == true)
        // Public again: others see her at once.
        hub.received(.setPrivate(false), from: ann, now: start + 42)
        hub.received(.leaders(goal: nil), from: other, now: start + 42)
        #expect(output.of(other).last == "done:leaders count=1 more=no")
        hub.received(fix(41), from: ann, now: start + 43)
        #expect(output.of(other).last?.hasPrefix("pace:ann ") == true, "other watched ann all along")
    }

    /// `stats:` (and `/metrics`, made of the same counters) answer anyone: a private run is in no count there, so
    /// the live runs counted are the ones the leaderboard shows.
    @Test func aPrivateRunIsCountedNowhereInPublic() throws {
        let hub = hub()
        _ = try privateRun(hub)
        let bob = friend
        hub.received(.identify(name: "bob", key: nil), from: bob, now: start)
        for index in 0..<30 { hub.received(fix(index), from: bob, now: start + Double(index)) }
        hub.received(.leaders(goal: nil), from: other, now: start + 31)
        #expect(output.of(other).last == "done:leaders count=1 more=no")
        hub.received(.stats, from: other, now: start + 31)
        let stats = try StatsEvent(line: try #require(output.of(other).last))
        #expect(stats["live_runs"] == 1, "as many as the leaderboard shows: \(stats.line)")
        #expect(stats["runs_started"] == 1 && stats["runners"] == 1, "\(stats.line)")
        #expect(stats["connections"] == 4 && stats["other"] == 3, "ann's connection has no public role: \(stats.line)")
    }

    @Test func aShareLinkOpensThePrivateRunUntilRevoked() throws {
        let hub = hub()
        _ = try privateRun(hub, seconds: 10)
        hub.received(.share(seconds: nil), from: ann, now: start + 10)
        let okLine = try #require(output.of(ann).last)
        let ok = try OkEvent(line: okLine)
        let token = try #require(ok["token"])
        #expect(token.count == 32, "128 random bits")
        #expect(ok["expires"] == ISODate.string(unixSeconds: start + 10 + 86_400))
        // Only the hash is stored.
        store.flush()
        #expect(try store.shareTokens().map(\.hash) == [RunnerKey.hash(token)])
        hub.received(.watch(.runner("ann"), token: token), from: friend, now: start + 11)
        #expect(output.of(friend).prefix(2).map { String($0.prefix(8)) } == ["ok:watch", "run:ann "])
        hub.received(fix(11), from: ann, now: start + 11)
        #expect(output.of(friend).last?.hasPrefix("pace:ann ") == true)
        hub.received(.listRuns(name: "ann", offset: 0, limit: 5), from: friend, now: start + 11)
        #expect(output.of(friend).last == "done:runs count=1 more=no")
        // Revoked: the friend is told at once and hears nothing more.
        hub.received(.unshare(token: token), from: ann, now: start + 12)
        #expect(output.of(ann).last == "ok:unshare count=1")
        #expect(output.of(friend).last?.hasPrefix("err:revoked ") == true)
        let heard = output.of(friend).count
        hub.received(fix(12), from: ann, now: start + 12)
        #expect(output.of(friend).count == heard)
        // And the token no longer opens anything: the same answer as any wrong token, for any name.
        hub.received(.watch(.runner("ann"), token: token), from: friend, now: start + 13)
        hub.received(.watch(.runner("zed"), token: token), from: control, now: start + 13)
        #expect(output.of(friend).last == output.of(control).last?.replacingOccurrences(of: "zed", with: "ann"))
        #expect(output.of(friend).last?.hasPrefix("err:wrong_key ") == true)
        #expect(hub.sessions[friend]?.wrongGuesses == 1 && hub.sessions[control]?.wrongGuesses == 1, "each a guess")
    }

    @Test func anExpiredShareLinkStopsAtOnceForAConnectedWatcher() throws {
        let hub = hub()
        _ = try privateRun(hub, seconds: 5)
        hub.received(.share(seconds: 60), from: ann, now: start + 5)
        let okLine = try #require(output.of(ann).last)
        let token = try #require(try OkEvent(line: okLine)["token"])
        hub.received(.coach(.runner("ann"), token: token), from: friend, now: start + 6)
        #expect(output.of(friend).first == "ok:coach target=ann")
        hub.tick(now: start + 64)
        #expect(!output.of(friend).contains { $0.hasPrefix("err:revoked") }, "still valid")
        hub.tick(now: start + 65)
        #expect(output.of(friend).last?.hasPrefix("err:revoked ") == true)
        hub.received(.stop(save: true), from: ann, now: start + 66)
        #expect(!output.of(friend).contains { $0.hasPrefix("end:") })
    }

    @Test func aGuesserIsStoppedAndTheRunnersOwnCommandsNeedItsConnection() {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        for command: Command in [.setPrivate(true), .privacyZone(200), .share(seconds: nil), .unshare(token: nil)] {
            hub.received(command, from: other, now: start)
            #expect(output.of(other).last?.hasPrefix("err:not_identified") == true, "\(command)")
        }
        // Wrong tokens and keys are counted (and slowed past the limit: `GuessingLimitTests`).
        hub.received(.watch(.runner("ann"), token: "0123456789abcdef0123456789abcdef"), from: other, now: start)
        #expect(output.of(other).last?.hasPrefix("err:wrong_key") == true)
        hub.received(.identify(name: "ann", key: "0123456789abcdef0123456789abcdef"), from: other, now: start)
        #expect(output.of(other).last == "err:wrong_key \"wrong key for ann\"")
        #expect(hub.sessions[other]?.wrongGuesses == 2)
        // Asking for a claimed name without a key is no guess.
        hub.received(.identify(name: "ann", key: nil), from: control, now: start)
        #expect(output.of(control).last?.hasPrefix("err:wrong_key") == true && hub.sessions[control]?.wrongGuesses == 0)
    }
}
