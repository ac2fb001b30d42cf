@testable import LiveCore
import Foundation
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// What the hub tells people: `note:` for fixes that start no run, and a late follower's snapshot.
@Suite(.mayBlock) struct HubNoteTests {
    let output = RecordingOutput()
    let store = MemoryRunStore()
    let runner = ConnectionID(1), spectator = ConnectionID(2), coach = ConnectionID(3)
    let now = 1_800_000_000.0

    func hub() -> HubDriver {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        for id in [runner, spectator, coach] { hub.connected(id, now: now) }
        return hub
    }

    func fix(at time: Double, accuracy: Double = 5, north metres: Double = 0) -> Command {
        .location(LocationCommand(latitude: 51.5 + metres / 111_229, longitude: -0.12, accuracy: accuracy,
                                  timestamp: time, timestampText: String(time)))
    }

    func lines(for id: ConnectionID) -> [String] { output.lines.filter { $0.0 == id }.map(\.1) }

    @Test func aStaleFirstFixIsExplainedOnceToTheRunnerOnly() throws {
        let hub = hub()
        hub.received(.watch(.everyone), from: spectator, now: now)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: now)
        // Each further from the one before than half its age: each a cached position, not a recording.
        for age: Double in [28 * 3600, 10 * 3600, 3 * 3600, 3600, 1200] { hub.received(fix(at: now - age), from: runner, now: now) }
        hub.received(fix(at: now, accuracy: 80), from: runner, now: now)
        hub.received(fix(at: now + 1, accuracy: 90), from: runner, now: now + 1)
        let notes = lines(for: runner).filter { $0.hasPrefix("note:") }
        #expect(notes.count == 2, "one note per reason, not per fix: \(notes)")
        let stale = try NoteEvent(event: Event.parse(notes[0]))
        #expect(stale.runner == "ann" && stale.reason == "stale")
        #expect(stale.text.contains("28 h old") && stale.text.contains("date +%s"))
        let inaccurate = try NoteEvent(event: Event.parse(notes[1]))
        #expect(inaccurate.reason == "inaccurate" && inaccurate.text.contains("80 m"))
        #expect(!lines(for: spectator).contains { $0.hasPrefix("note:") })
        hub.received(.stop(save: true), from: runner, now: now + 2)
        let refusal = try #require(lines(for: runner).last)
        #expect(refusal.hasPrefix("err:no_run") && refusal.contains("inaccurate, stale"))
    }

    @Test(arguments: ["9999999999999999999999999999999999999999", "-999999999999999999999999999999999999999"])
    func aStampOfFortyDigitsIsExplainedNotCrashedOn(text: String) throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: runner, now: now)
        let time = try #require(Double(text))
        hub.received(.location(LocationCommand(latitude: 51.5, longitude: -0.12, accuracy: 5, timestamp: time,
                                               timestampText: text)), from: runner, now: now)
        let note = try NoteEvent(event: Event.parse(try #require(lines(for: runner).last { $0.hasPrefix("note:") })))
        #expect(note.reason == (time > now ? "future" : "stale"))
        #expect(note.text.contains(" h "), "\(note.text)")
    }

    /// `Date.now()` of JavaScript is milliseconds: the note names that mistake instead of a clock
    /// hundreds of millions of hours ahead. A clock merely ahead still gets the clock advice.
    @Test(arguments: [(1_800_000_000_123.0, true), (1_800_000_000.0 + 30 * 3600, false),
                      (1_800_000_000_000_000.0, false)])
    func aStampInMillisecondsIsNamedAsSuch(stamp: Double, isMilliseconds: Bool) throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: runner, now: now)
        hub.received(fix(at: stamp), from: runner, now: now)
        let note = try NoteEvent(event: Event.parse(try #require(lines(for: runner).last { $0.hasPrefix("note:") })))
        #expect(note.reason == "future")
        #expect(note.text.contains("looks like milliseconds; loc: takes unix seconds") == isMilliseconds, "\(note.text)")
        #expect(note.text.contains("check the phone's clock") == !isMilliseconds, "\(note.text)")
    }

    @Test func aLateFollowerSeesTheRunsBadgesSoFar() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: runner, now: now)
        // 1 km north at 4 m/s: Earth, then the Atmosphere (804.67 m).
        for second in 0...250 {
            let time = now + Double(second)
            hub.received(fix(at: time, north: Double(second) * 4), from: runner, now: time)
        }
        let late = now + 251
        hub.received(.watch(.runner("ann")), from: spectator, now: late)
        hub.received(.coach(.runner("ann")), from: coach, now: late)
        let watched = lines(for: spectator).map { $0.prefix { $0 != ":" } }
        #expect(watched == ["ok", "run", "badge", "badge", "pace"])
        let badges = lines(for: spectator).filter { $0.hasPrefix("badge:") }
        #expect(badges.map { try! BadgeEvent(event: Event.parse($0)).badgeID } == ["earth", "atmosphere"])
        #expect(lines(for: coach).map { $0.prefix { $0 != ":" } } == ["ok", "run", "badge", "badge"])
    }

    @Test func aRunEndsAtItsLastAcceptedFixNotAtTheServersClock() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: runner, now: now)
        for second in 0..<20 {
            hub.received(fix(at: now + Double(second), north: Double(second) * 3), from: runner, now: now + Double(second))
        }
        // The runner vanishes; the resume window runs out long after the last fix.
        hub.disconnected(runner, now: now + 20)
        hub.tick(now: now + 20 + ServerConfiguration().resumeWindow + 5)
        store.flush()
        let run = try #require(try store.runs(of: "ann", offset: 0, limit: 1).first)
        #expect(run.status == .timedOut)
        #expect(run.ended == now + 19)
    }
}
