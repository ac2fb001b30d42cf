@testable import LiveCore
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// Wrong keys and share tokens on the line protocol, decided by the hub: counted per connection, source address
/// and runner tried; answered at once, then slowed, then refused; a connection that gave the limit is closed;
/// and a right key is never held up by a guesser behind the same address.
@Suite struct GuessingLimitTests {
    let store = MemoryRunStore()
    let start = 1_700_000_000.0
    let wrongKey = "0123456789abcdef0123456789abcdef"

    /// ann claimed (her key returned) on a hub allowing 3 wrong guesses a minute.
    func hub() throws -> (Hub, key: String) {
        var configuration = ServerConfiguration()
        configuration.deviceFailuresPerMinute = 3
        let hub = Hub(configuration: configuration, store: store)
        let owner = ConnectionID(1)
        hub.connected(owner, address: "10.9.9.9", now: start)
        hub.learned(nil, named: "ann")  // what the store said of the name (nobody's)
        hub.received(.identify(name: "ann", key: nil), from: owner, now: start)
        var key: String?
        while let effect = hub.effects.next() {
            if case .sendOnceStored(let lines, _, _) = effect {
                key = try OkEvent(line: String(decoding: lines[0].dropLast(), as: UTF8.self))["key"]
            }
        }
        hub.disconnected(owner, now: start)
        while hub.effects.next() != nil {}
        return (hub, try #require(key))
    }

    /// What one guess from a new connection at `address` for `name` came to.
    enum Outcome: Equatable {
        case answered(closed: Bool)
        case slowed(Double, closed: Bool)
        case accepted
    }

    func guess(_ hub: Hub, _ id: Int, from address: String, name: String = "ann", key: String? = nil,
               at time: Double? = nil) -> Outcome {
        let connection = ConnectionID(id)
        let now = time ?? start + 1
        hub.connected(connection, address: address, now: now)
        hub.received(.identify(name: name, key: key ?? wrongKey), from: connection, now: now)
        var outcome: Outcome?
        var closed = false
        while let effect = hub.effects.next() {
            switch effect {
            case .send(let line, connection, _) where line.starts(with: Array("err:wrong_key".utf8)):
                outcome = .answered(closed: false)
            case .send(let line, connection, _) where line.starts(with: Array("ok:iam".utf8)):
                outcome = .accepted
            case .answerLater(let line, connection, let seconds, let thenClose):
                #expect(line.starts(with: Array("err:wrong_key".utf8)))
                outcome = .slowed(seconds, closed: thenClose)
            case .sendOnceStored(let lines, connection, _) where lines[0].starts(with: Array("ok:iam".utf8)):
                outcome = .accepted
            case .close(connection, _):
                closed = true
            default:
                break
            }
        }
        if case .answered = outcome { outcome = .answered(closed: closed) }
        return outcome ?? .answered(closed: closed)
    }

    @Test func wrongKeysAreAnsweredThenSlowedPerAddressAndTheRightKeyIsNeverHeldUp() throws {
        let (hub, key) = try hub()
        // Three from one address: answered at once (each from a connection of its own).
        for id in 10..<13 { #expect(guess(hub, id, from: "10.0.0.1") == .answered(closed: false)) }
        // The fourth and fifth: over the address's limit, slowed a quarter of a second more each time.
        #expect(guess(hub, 13, from: "10.0.0.1") == .slowed(0.25, closed: false))
        #expect(guess(hub, 14, from: "10.0.0.1") == .slowed(0.5, closed: false))
        // The right key from that very address: accepted at once.
        #expect(guess(hub, 15, from: "10.0.0.1", key: key) == .accepted)
    }

    @Test func aRunnerTriedFromManyAddressesIsSlowedToo() throws {
        let (hub, _) = try hub()
        for id in 20..<23 { #expect(guess(hub, id, from: "10.1.0.\(id)") == .answered(closed: false)) }
        #expect(guess(hub, 23, from: "10.1.0.23") == .slowed(0.25, closed: false), "ann's fourth wrong key this minute")
        // A minute later the counts start again.
        #expect(guess(hub, 25, from: "10.1.0.25", at: start + 62) == .answered(closed: false))
    }

    @Test func aConnectionThatGivesTheLimitIsClosedAndAnAddressFarOverItRefused() throws {
        let (hub, _) = try hub()
        let connection = ConnectionID(30)
        hub.connected(connection, address: "10.2.0.1", now: start + 1)
        var closedAfter: Int?
        for attempt in 1...3 {
            hub.received(.identify(name: "ann", key: wrongKey), from: connection, now: start + 1)
            while let effect = hub.effects.next() {
                if case .close(connection, _) = effect, closedAfter == nil { closedAfter = attempt }
            }
        }
        #expect(closedAfter == 3, "closed at its third wrong key")
        // Past five times the limit from one address (15): refused at once, and closed.
        for id in 31..<43 { _ = guess(hub, id, from: "10.2.0.1") }
        let refused = ConnectionID(50)
        hub.connected(refused, address: "10.2.0.1", now: start + 1)
        hub.received(.identify(name: "ann", key: wrongKey), from: refused, now: start + 1)
        var lines: [String] = [], closed = false
        while let effect = hub.effects.next() {
            if case .send(let line, refused, _) = effect { lines.append(String(decoding: line, as: UTF8.self)) }
            if case .close(refused, _) = effect { closed = true }
        }
        #expect(lines.first?.hasPrefix("err:wrong_key \"too many wrong keys or tokens") == true, "\(lines)")
        #expect(closed)
    }
}
