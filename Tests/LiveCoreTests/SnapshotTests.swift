@testable import LiveCore
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// A run's snapshot for the other nodes after its events were dropped on the way to the bus: what the owning
/// hub relays, and what a hub on another node does with it (its mirror takes it as a catch-up, its followers
/// of the runner hear it as a late joiner does). No sockets, no driver: effects as a driver takes them.
@Suite struct SnapshotTests {
    let store = MemoryRunStore()
    let start = 1_700_000_000.0
    let runner = ConnectionID(1), spectator = ConnectionID(2)

    /// Every effect of the inputs so far.
    func effects(of hub: Hub) -> [HubEffect] {
        var taken: [HubEffect] = []
        while let effect = hub.effects.next() { taken.append(effect) }
        return taken
    }

    /// The news `hub` relayed among its effects so far.
    func relayed(by hub: Hub) -> [HubNews] {
        var news: [HubNews] = []
        // Taken as each comes: the list of news empties with the list of effects.
        while let effect = hub.effects.next() {
            if case .relay(let index) = effect { news.append(hub.effects.takeNews(index)) }
        }
        return news
    }

    /// The lines `hub` sent to `id` among its effects so far, without their newline.
    func lines(sentBy hub: Hub, to id: ConnectionID) -> [String] {
        effects(of: hub).compactMap { effect in
            guard case .send(let line, let to, _) = effect, to == id else { return nil }
            return String(decoding: line.dropLast(), as: UTF8.self)
        }
    }

    /// A hub numbering its events as a cluster node does (by the shared counter).
    func clusterHub() -> Hub {
        let hub = Hub(configuration: ServerConfiguration(), store: store)
        var next: UInt64 = 0
        hub.share(sequence: {
            next += 1
            return next
        })
        return hub
    }

    /// ann running on `hub` with `fixes` fixes.
    func annRuns(on hub: Hub, fixes: Int) throws {
        hub.connected(runner, address: "10.0.0.1", now: start)
        hub.learned(nil, named: "ann")
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        for line in straightRun(count: fixes, from: start, speed: 4) {
            hub.received(try Command.parse(Array(line.utf8)), from: runner, now: start + 1)
        }
        _ = effects(of: hub)
    }

    @Test func aLiveRunIsResentAsItStandsAndFollowersElsewhereHearIt() throws {
        let owner = clusterHub()
        try annRuns(on: owner, fixes: 20)
        owner.resendToOtherNodes("ann", now: start + 30)
        let snapshot = relayed(by: owner).compactMap { news -> RelayedEvent? in
            if case .event(let event) = news { event } else { nil }
        }
        #expect(snapshot.map { String(decoding: $0.line.prefix(4), as: UTF8.self) } == ["run:", "badg", "pace"])
        #expect(snapshot.allSatisfy { $0.isCatchUp && $0.isSnapshot && $0.runner == "ann" })

        // Another node with a spectator of ann: the snapshot is what a late joiner gets.
        let elsewhere = clusterHub()
        elsewhere.connected(spectator, address: "10.0.0.2", now: start)
        elsewhere.received(.watch(.runner("ann"), token: nil), from: spectator, now: start)
        _ = effects(of: elsewhere)
        for event in snapshot { elsewhere.hear(.event(event), now: start + 30) }
        let heard = lines(sentBy: elsewhere, to: spectator)
        #expect(heard.map { String($0.prefix(4)) } == ["run:", "badg", "pace"], "\(heard)")
        // The same as a catch-up (a recovered run): the mirror learns it, the spectator hears nothing again.
        let quiet = clusterHub()
        quiet.connected(spectator, address: "10.0.0.2", now: start)
        quiet.received(.watch(.runner("ann"), token: nil), from: spectator, now: start)
        _ = effects(of: quiet)
        for var event in snapshot {
            event.isSnapshot = false
            quiet.hear(.event(event), now: start + 30)
        }
        #expect(lines(sentBy: quiet, to: spectator).isEmpty)
        #expect(quiet.liveRun(of: "ann") != nil, "the mirror has the run")
    }

    @Test func aRunThatEndedMeanwhileHasItsEndResent() throws {
        let owner = clusterHub()
        try annRuns(on: owner, fixes: 5)
        owner.received(.stop(save: true), from: runner, now: start + 10)
        _ = effects(of: owner)
        owner.resendToOtherNodes("ann", now: start + 11)
        let snapshot = relayed(by: owner)
        guard snapshot.count == 1, case .event(let end) = snapshot[0], case .ended = end.kind else {
            Issue.record("\(snapshot)")
            return
        }
        #expect(end.isSnapshot && end.line.starts(with: Array("end:ann ".utf8)))
        // Nobody else's run is resent: bob never ran here.
        owner.resendToOtherNodes("bob", now: start + 11)
        #expect(relayed(by: owner).isEmpty)
    }
}
