@testable import LiveCore
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// The hub decides and records; nothing it decides happens until its driver takes the effects, in order.
@Suite struct HubEffectsTests {
    let store = MemoryRunStore()
    let runner = ConnectionID(1), spectator = ConnectionID(2), stream = ConnectionID(3)
    let start = 1_700_000_000.0

    func fix(_ index: Int) -> Command {
        .location(LocationCommand(latitude: 51.5 + Double(index) * 3 / 111_229, longitude: -0.12, accuracy: 5,
                                  timestamp: start + Double(index), timestampText: String(Int(start) + index)))
    }

    /// Every effect of one input, taken as a driver takes them.
    func effects(of hub: Hub) -> [HubEffect] {
        var taken: [HubEffect] = []
        while let effect = hub.effects.next() { taken.append(effect) }
        return taken
    }

    func lines(in effects: [HubEffect], to id: ConnectionID) -> [String] {
        effects.compactMap {
            if case .send(let line, id, _) = $0 { String(decoding: line.dropLast(), as: UTF8.self) } else { nil }
        }
    }

    @Test func anInputChangesNothingOutsideTheHubUntilItsEffectsAreTaken() {
        let hub = Hub(configuration: ServerConfiguration(), store: store)
        hub.connected(runner, now: start)
        hub.connected(spectator, now: start)
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        // A name the hub has not met is first looked up in the store (off the loop); the hub decides with the answer.
        let asked = effects(of: hub)
        #expect(asked.contains { if case .lookUp(.runner("ann"), .command(.identify), runner) = $0 { true } else { false } })
        #expect(!asked.contains { if case .sendOnceStored = $0 { true } else { false } }, "nothing claimed before the answer")
        #expect(lines(in: asked, to: spectator).first?.hasPrefix("ok:watch") == true)
        hub.learned(nil, named: "ann")
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        #expect(!hub.effects.isEmpty, "the claim's answer waits")
        let answers = effects(of: hub)
        #expect(hub.effects.isEmpty && hub.effects.next() == nil)
        #expect(answers.contains { if case .sendOnceStored(let lines, runner, _) = $0 {
            String(decoding: lines[0], as: UTF8.self).hasPrefix("ok:iam")
        } else { false } }, "a claimed name is answered once stored")

        hub.received(fix(0), from: runner, now: start)
        let first = effects(of: hub)
        #expect(lines(in: first, to: spectator).contains { $0.hasPrefix("run:ann") })
        // The spectator's copy comes before the runner's own (somebody is waiting for it).
        let order = first.compactMap { if case .send(let line, let id, _) = $0, line.starts(with: Array("pace:".utf8)) { id } else { nil } }
        #expect(order == [spectator, runner], "\(order)")
    }

    /// Effects decided while earlier ones are carried out join the end of the same list: they follow what was
    /// decided before them, whoever takes them.
    @Test func effectsDecidedWhileCarryingOutFollowTheEarlierOnes() {
        let hub = Hub(configuration: ServerConfiguration(), store: store)
        hub.connected(spectator, now: start)
        hub.received(.ping, from: spectator, now: start)
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        var seen: [String] = []
        while let effect = hub.effects.next() {
            if case .send(let line, _, _) = effect { seen.append(String(decoding: line.prefix(while: { $0 != 32 && $0 != 10 }), as: UTF8.self)) }
            // As a driver whose carrying out feeds the hub again (an answer read off the loop).
            if seen.count == 1 { hub.received(.ping, from: spectator, now: start) }
        }
        #expect(seen == ["ok:ping", "ok:watch", "ok:ping"], "\(seen)")
        #expect(hub.effects.isEmpty)
    }

    /// A broadcast is numbered (an event stream's `id:`) only where an event stream may hear it; the typed event
    /// for the stream's JSON comes with the number.
    @Test func broadcastsAreNumberedOnlyWhileAnEventStreamIsHere() throws {
        let hub = Hub(configuration: ServerConfiguration(), store: store)
        hub.connected(runner, now: start)
        hub.connected(spectator, now: start)
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.learned(nil, named: "ann")
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        hub.received(fix(0), from: runner, now: start)
        _ = effects(of: hub)
        hub.received(fix(1), from: runner, now: start + 1)
        #expect(!effects(of: hub).contains { if case .broadcastBegins = $0 { true } else { false } },
                "no stream: nothing numbered")

        hub.connected(stream, address: "10.0.0.9", eventStream: true, now: start + 1)
        hub.received(.watch(.runner("ann")), from: stream, now: start + 1)
        _ = effects(of: hub)
        hub.received(fix(2), from: runner, now: start + 2)
        let numbered = effects(of: hub)
        let begins = numbered.compactMap { if case .broadcastBegins(let sequence, let typed) = $0 { (sequence, typed) } else { nil } }
        let ends = numbered.filter { if case .broadcastEnds = $0 { true } else { false } }
        let pace = try #require(begins.first)
        #expect(begins.count == ends.count && !begins.isEmpty)
        #expect(pace.0 == hub.eventSequence, "the newest event's number")
        let typed = try #require(pace.1, "the typed event comes along for the stream's JSON")
        #expect(typed.line.starts(with: Array("pace:ann".utf8)))
        #expect(lines(in: numbered, to: stream).contains { $0.hasPrefix("pace:ann") })

        hub.disconnected(stream, now: start + 3)
        hub.received(fix(3), from: runner, now: start + 3)
        #expect(!effects(of: hub).contains { if case .broadcastBegins = $0 { true } else { false } },
                "the stream gone: nothing numbered again")
    }

    /// Another loop's pace numbers only its own deliveries: a checkpoint alert it leads to here is another
    /// event, never sent under the pace's number (a stream that both watches and coaches would see one id twice).
    @Test func aRelayedPaceNumbersItsOwnDeliveriesOnly() throws {
        let hub = Hub(configuration: ServerConfiguration(), store: store)
        hub.connected(stream, address: "10.0.0.9", eventStream: true, now: start)
        hub.received(.watch(.runner("zed")), from: stream, now: start)
        hub.received(.coach(.runner("zed"), every: 1_000), from: stream, now: start)
        hub.receiveRelayed(RelayedEvent(runner: "zed", line: Array("run:zed id=900 ts=\(Int(start))\n".utf8),
                                        audience: .everyone, sequence: 5,
                                        kind: .started(runID: 900, started: start, startHistory: BadgeHistory())), now: start)
        hub.receiveRelayed(RelayedEvent(runner: "zed", line: Array("pace:zed d=900 t=300\n".utf8), audience: .spectators,
                                        sequence: 6, kind: .pace(distance: 900, elapsed: 300, movingTime: 300,
                                                                 rejections: [:], goal: nil)), now: start + 300)
        _ = effects(of: hub)
        hub.receiveRelayed(RelayedEvent(runner: "zed", line: Array("pace:zed d=1100 t=360\n".utf8), audience: .spectators,
                                        sequence: 7, kind: .pace(distance: 1_100, elapsed: 360, movingTime: 360,
                                                                 rejections: [:], goal: nil)), now: start + 360)
        var numbered: UInt64?
        var sent: [(String, UInt64?)] = []
        for effect in effects(of: hub) {
            switch effect {
            case .broadcastBegins(let sequence, _): numbered = sequence
            case .broadcastEnds: numbered = nil
            case .send(let line, stream, _): sent.append((String(decoding: line.prefix(while: { $0 != 32 }), as: UTF8.self), numbered))
            default: break
            }
        }
        let pace = try #require(sent.first { $0.0 == "pace:zed" }, "\(sent)")
        let checkpoint = try #require(sent.first { $0.0 == "alert:zed" }, "the coach's checkpoint at 1 km: \(sent)")
        #expect(pace.1 == 7, "the pace under its own number")
        #expect(checkpoint.1 != 7, "the checkpoint alert is not the pace: \(sent)")
    }

    /// The source address comes with the connection: limits per address are the hub's to apply.
    @Test func theAddressAConnectionCameFromLimitsItsCheers() {
        var configuration = ServerConfiguration()
        configuration.cheersPerSecond = 100
        configuration.cheersPerSecondPerRunner = 100
        configuration.cheersPerSecondPerAddress = 1  // a burst of 5
        let hub = Hub(configuration: configuration, store: store)
        let a = ConnectionID(10), b = ConnectionID(11), elsewhere = ConnectionID(12)
        hub.connected(runner, address: "10.0.0.7", now: start)
        hub.learned(nil, named: "ann")
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        hub.received(fix(0), from: runner, now: start)
        for (id, address) in [(a, "10.0.0.1"), (b, "10.0.0.1"), (elsewhere, "10.0.0.2")] {
            hub.connected(id, address: address, now: start)
            hub.received(.watch(.runner("ann")), from: id, now: start)
        }
        _ = effects(of: hub)
        for _ in 0..<5 { hub.received(.cheer("go"), from: a, now: start) }
        _ = effects(of: hub)
        for id in [a, b, elsewhere] { hub.received(.cheer("go"), from: id, now: start) }
        let answers = effects(of: hub)
        // Each gets the cheers the others sent before it (they watch the same runner); the answer is its own.
        func answer(_ id: ConnectionID) -> String? { lines(in: answers, to: id).first { $0.hasPrefix("ok:") || $0.hasPrefix("err:") } }
        #expect(answer(a)?.hasPrefix("err:busy") == true, "its address spent its burst: \(lines(in: answers, to: a))")
        #expect(answer(b)?.hasPrefix("err:busy") == true, "the same address, within the second: \(lines(in: answers, to: b))")
        #expect(answer(elsewhere)?.hasPrefix("ok:msg") == true, "another address: \(lines(in: answers, to: elsewhere))")
    }

    /// What the server asks before it moves or claims: answered from the hub's state, changing nothing.
    @Test func questionsAboutNamesAndRuns() {
        let hub = Hub(configuration: ServerConfiguration(), store: store)
        hub.connected(runner, now: start)
        hub.connected(spectator, now: start)
        #expect(hub.claimsUnknownName(.identify(name: "ann", key: nil), from: runner))
        #expect(!hub.claimsUnknownName(.identify(name: "ann", key: "k"), from: runner), "a key: not a claim")
        #expect(hub.resumesRunNotHere(.identify(name: "ann", key: "k"), from: runner))
        hub.learned(nil, named: "ann")
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        hub.received(fix(0), from: runner, now: start)
        _ = effects(of: hub)
        #expect(hub.isIdentified(runner) && !hub.isIdentified(spectator))
        #expect(hub.hasRunHere("ann") && hub.isKnownHere("ann") && hub.isKnownAnywhere("ann"))
        #expect(!hub.claimsUnknownName(.identify(name: "ann", key: nil), from: spectator), "a known name")
        #expect(!hub.resumesRunNotHere(.identify(name: "ann", key: "k"), from: spectator), "its run is here")
        #expect(hub.connectedAt(runner) == start && hub.connectedAt(ConnectionID(99)) == nil)
        #expect(hub.effects.isEmpty, "questions decide nothing")
    }

    /// The web overview: live runs anyone may see, ranked, and the latest public ends, newest first.
    @Test func theOverviewRanksLiveRunsAndHidesPrivateOnes() {
        let hub = Hub(configuration: ServerConfiguration(), store: store)
        let bob = ConnectionID(4), cat = ConnectionID(5)
        for id in [runner, bob, cat] { hub.connected(id, now: start) }
        for (id, name) in [(runner, "ann"), (bob, "bob"), (cat, "cat")] {
            hub.learned(nil, named: name)
            hub.received(.identify(name: name, key: nil), from: id, now: start)
        }
        hub.received(.setPrivate(true), from: cat, now: start)
        for index in 0..<20 {
            hub.received(fix(index), from: runner, now: start + Double(index))
            if index < 10 { hub.received(fix(index), from: bob, now: start + Double(index)) }
            hub.received(fix(index), from: cat, now: start + Double(index))
        }
        hub.tick(now: start + 20)
        _ = effects(of: hub)
        let overview = hub.overview()
        #expect(overview.live.map(\.name) == ["ann", "bob"], "ranked by distance; the private runner nowhere")
        #expect(overview.live.map(\.position) == [1, 2])
        #expect(overview.live.allSatisfy { $0.paceLine?.starts(with: Array("pace:\($0.name)".utf8)) == true })
        hub.received(.stop(save: true), from: bob, now: start + 21)
        hub.received(.stop(save: true), from: cat, now: start + 21)
        _ = effects(of: hub)
        #expect(hub.overview().ended.map { Hub.subject(of: $0) } == ["bob"], "a private run's end is not shown")
    }
}
