@testable import LiveCore
import Foundation
import HTTP
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// Phones in the field (issue 25): a phone offline at the start, or mid-run, keeps its positions and sends
/// them later, oldest first (Traccar Client, OwnTracks) or in another order. Every position answered 200 is
/// stored and measured: the saved run equals its positions measured in time order, as if sent live.
@Suite struct PhoneBacklogTests {
    static func queue(count: Int, step: Int = 4, endingAgo: Double = 0) -> [Fix] {
        PhoneFixtures.queue(count: count, step: step, endingAgo: endingAgo)
    }

    /// The positions measured in time order, each as it was taken: what sending them live gives.
    static func measuredLive(_ fixes: [Fix]) -> RunSummary {
        var tracker = RunTracker(configuration: ServerConfiguration().tracker.keepingTrack(false))
        for fix in fixes.sorted(by: { $0.timestamp < $1.timestamp }) { _ = tracker.add(fix, now: fix.timestamp) }
        return tracker.finish()
    }

    static func osmAnd(_ fix: Fix, token: String) -> String { PhoneFixtures.osmAnd(fix, token: token) }

    /// A runner with a phone token, a TCP spectator of them, and the app's connection.
    struct Field {
        let key: String
        let token: String
        let spectator: PureClient
        let app: PureWebClient
    }

    static func field(_ server: PureServer) throws -> Field {
        let (ann, key) = try connectRunner("ann", to: server)
        let token = try DeviceAppTests.deviceToken(ann)
        ann.close()  // the phone app takes over
        let spectator = server.connect()
        try spectator.send("watch:ann")
        try spectator.expectNext("ok:watch")
        return Field(key: key, token: token, spectator: spectator,
                     app: server.web())
    }

    /// A server with a fresh store, and the field on it.
    static func withField(_ body: @escaping @Sendable (PureServer, Field, MemoryRunStore) throws -> Void) async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            try withPureServer(store: store) { server in try body(server, try Self.field(server), store) }
        }
    }

    /// Sends each position as its own request, as Traccar Client sends its queue: every one answered 200.
    static func send(_ fixes: [Fix], _ field: Field) throws {
        for fix in fixes {
            let answer = try field.app.get(osmAnd(fix, token: field.token))
            #expect(answer.status == 200, "\(answer)")
        }
    }

    /// Ends the run from the runner's page and gives it as stored, with the lines the spectator got.
    /// `seen`: the spectator's lines already read.
    static func stop(_ field: Field, store: MemoryRunStore, seen: [String] = []) throws -> (StoredRun, [String]) {
        let stopped = try field.app.post("/runners/ann/stop", body: "key=\(field.key)", type: "application/x-www-form-urlencoded")
        #expect(stopped.status == 200, "\(stopped)")
        let lines = try seen + field.spectator.lines(until: "end:ann", timeout: 30) { $0.hasPrefix("end:ann") }
        store.flush()
        let runID = try RunStartedEvent(event: Event.parse(try #require(lines.first { $0.hasPrefix("run:ann") }))).runID
        return (try #require(try store.run(id: runID)), lines)
    }

    /// The stored run has the figures of its positions measured in time order, every position is stored and
    /// exported in time order.
    static func expectMeasuredInTimeOrder(_ stored: StoredRun, _ fixes: [Fix], store: MemoryRunStore,
                                          _ server: PureServer) throws {
        let live = measuredLive(fixes)
        let record = stored.record
        #expect(record.distance == live.distance, "stored \(record.distance) m, measured live \(live.distance) m")
        #expect(record.elapsed == live.elapsed && record.movingTime == live.movingTime)
        #expect(record.started == fixes.map(\.timestamp).min())
        #expect(stored.splits == live.splits)
        #expect(stored.awards.map(\.award) == live.awards)
        let kept = try store.fixes(ofRun: record.id)
        #expect(kept.count == fixes.count && kept.allSatisfy(\.isAccepted))
        let web = server.web()
        let gpx = try web.get("/runs/\(record.id).gpx").text
        let times = gpx.components(separatedBy: "<time>").dropFirst().map { $0.prefix(20) }
        #expect(times.count >= fixes.count)
        #expect(times.suffix(fixes.count) == fixes.sorted { $0.timestamp < $1.timestamp }
                    .map { ISODate.string(unixSeconds: $0.timestamp).prefix(20) }[...])
    }

    @Test func aPhoneOfflineForTheFirstEightMinutesKeepsTheStart() async throws {
        try await Self.withField { server, field, store in
            let fixes = Self.queue(count: 121)  // 8 minutes at one every 4 s, the last current
            try Self.send(fixes, field)
            let (stored, lines) = try Self.stop(field, store: store)
            #expect(stored.record.distance > 1000, "the whole 8 minutes, not a few metres")
            try Self.expectMeasuredInTimeOrder(stored, fixes, store: store, server)
            // Spectators saw the run start when it did, and the marker end where the phone is now; the burst's
            // paces have no current pace (it is not the runner's now).
            let started = try RunStartedEvent(event: Event.parse(try #require(lines.first { $0.hasPrefix("run:") })))
            #expect(started.timestamp == String(Int64(fixes[0].timestamp)))
            let paces = try lines.filter { $0.hasPrefix("pace:") }.map { try PaceEvent(event: Event.parse($0)) }
            #expect(paces.last?.timestamp == String(Int64(fixes.last!.timestamp)))
            let now = Date().timeIntervalSince1970
            let caughtUp = paces.filter { Double($0.timestamp)! < now - 60 }
            #expect(!caughtUp.isEmpty && caughtUp.allSatisfy { $0.current == nil })
        }
    }

    @Test func oneStalePositionBeforeAFreshSessionIsNotTheStart() async throws {
        try await Self.withField { server, field, store in
            let fresh = Self.queue(count: 3)
            // The phone's last known position, from an earlier session 10 minutes ago and 300 m away.
            let cached = Fix(latitude: fresh[0].latitude + 0.0027, longitude: fresh[0].longitude, accuracy: 5,
                             timestamp: fresh[0].timestamp - 600)
            try Self.send([cached] + fresh, field)
            let (stored, _) = try Self.stop(field, store: store)
            #expect(stored.record.started == fresh[0].timestamp)
            #expect(stored.record.rejections == [.stale: 1])
            #expect(stored.record.distance == Self.measuredLive(fresh).distance)
        }
    }

    @Test func aFiveMinuteGapMidRunIsFilledByTheQueueSentAfterTheCurrentPositions() async throws {
        try await Self.withField { server, field, store in
            let fixes = Self.queue(count: 295)  // 20 minutes, one every 4 s, the last current
            let (before, gap, after) = (fixes[..<150], fixes[150..<225], fixes[225...])
            try Self.send(Array(before), field)
            // Back online: the phone's current positions first, then the 5 minutes it kept.
            try Self.send(Array(after), field)
            try Self.send(Array(gap), field)
            // Measured again once the burst is over: a pace for where the run stands, without a current pace.
            let whole = Self.measuredLive(fixes).distance
            let remeasured = try field.spectator.lines(until: "the run measured again", timeout: 60) { line in
                guard line.hasPrefix("pace:"), let pace = try? PaceEvent(event: Event.parse(line)) else { return false }
                return pace.distance >= whole - 50
            }
            #expect(try PaceEvent(event: Event.parse(remeasured.last!)).current == nil)
            let (stored, _) = try Self.stop(field, store: store, seen: remeasured)
            try Self.expectMeasuredInTimeOrder(stored, fixes, store: store, server)
        }
    }

    @Test func aQueueSentNewestFirstIsMeasuredInTimeOrder() async throws {
        try await Self.withField { server, field, store in
            let fixes = Self.queue(count: 121)
            try Self.send(fixes.reversed(), field)
            // A resend of one already stored is answered 200 and not stored again.
            try Self.send([fixes[40]], field)
            let (stored, _) = try Self.stop(field, store: store)
            try Self.expectMeasuredInTimeOrder(stored, fixes, store: store, server)
        }
    }
}

/// What a review found (issue 25): orders and mixes the first tests did not try.
extension PhoneBacklogTests {
    /// Positions of the recorded run at these seconds into it, moved so that the last is `endingAgo` seconds old.
    static func positions(at seconds: [Int], endingAgo: Double) -> [Fix] {
        let track = DeviceAppTests.track
        let end = Date().timeIntervalSince1970.rounded(.down) - endingAgo
        let shift = end - track[seconds.max()!].timestamp
        return seconds.map { Fix(latitude: track[$0].latitude, longitude: track[$0].longitude, accuracy: 5,
                                 timestamp: track[$0].timestamp + shift) }
    }

    @Test func aQueueSentNewestFirstWhoseNewestIsStaleKeepsEveryPosition() async throws {
        try await Self.withField { server, field, store in
            let fixes = Self.queue(count: 60, endingAgo: 300)  // all stale: the newest is held, the next confirms it
            try Self.send(fixes.reversed(), field)
            let (stored, _) = try Self.stop(field, store: store)
            #expect(stored.record.rejections.isEmpty, "\(stored.record.rejections)")
            try Self.expectMeasuredInTimeOrder(stored, fixes, store: store, server)
        }
    }

    @Test func positionsThatCameOutOfOrderWhileHeldAreMeasuredInTimeOrder() async throws {
        try await Self.withField { server, field, store in
            // 140 s between the last two (98 s before): sent newest first, the newest (200 s old) is held and
            // then taken for a cached position (140 s is more than half its age); the oldest arrives last and
            // begins the recording with the middle one. Measured again in time order, all three are one run.
            let fixes = Self.positions(at: [0, 50, 120], endingAgo: 200)
            try Self.send(fixes.reversed(), field)
            let (stored, _) = try Self.stop(field, store: store)
            #expect(stored.record.rejections.isEmpty, "\(stored.record.rejections)")
            try Self.expectMeasuredInTimeOrder(stored, fixes, store: store, server)
        }
    }

    @Test func aPhoneJoiningARunStartedOverTCPIsAnsweredOnlyForWhatIsStored() async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            try withPureServer(store: store) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let token = try DeviceAppTests.deviceToken(ann)
                let fixes = Self.positions(at: Array(stride(from: 0, through: 36, by: 4)), endingAgo: 4)
                for fix in [fixes.first!, fixes.last!] {
                    try ann.send("loc:\(fix.latitude),\(fix.longitude),5,\(Int64(fix.timestamp))")
                    try ann.expect("ack:ann ts=\(Int64(fix.timestamp))")
                }
                let app = server.web()
                for fix in fixes.dropFirst().dropLast() {
                    #expect(try app.get(Self.osmAnd(fix, token: token)).status == 200)
                }
                // Each answered position is on disk: filtered out_of_order, as over TCP (a run started over TCP
                // keeps TCP's rules; protocol.md §15).
                let runID = try #require(try store.runs(of: "ann", offset: 0, limit: 1).first?.id)
                let kept = try store.fixes(ofRun: runID)
                #expect(kept.count == fixes.count)
                #expect(kept.filter { $0.rejection == .outOfOrder }.count == fixes.count - 2)
            }
        }
    }

    @Test func aHeldStalePositionIsNoRunAnywhereUntilConfirmed() async throws {
        try await Self.withField { server, field, store in
            let cached = Self.queue(count: 1, endingAgo: 3600)[0]
            #expect(try field.app.get(Self.osmAnd(cached, token: field.token) + "&batt=9").status == 200)
            store.flush()
            #expect(try store.runs(of: "ann", offset: 0, limit: 5).isEmpty, "not in history")
            let api = try field.app.get("/api/runners/ann")
            #expect(!api.text.contains(#""last_run":1"#), "\(api.text)")
            // Nobody was told of a run, nor of a battery for it.
            try field.spectator.send("ping:")
            let seen = try field.spectator.lines(until: "ok:ping") { $0.hasPrefix("ok:ping") }
            #expect(seen == ["ok:ping"], "\(seen)")
            // The stop button drops what is held, as stop: does.
            let stopped = try field.app.post("/runners/ann/stop", body: "key=\(field.key)", type: "application/x-www-form-urlencoded")
            #expect(stopped.status == 409)
            // A fresh position after that starts a run of its own.
            let fresh = Self.queue(count: 1)[0]
            #expect(try field.app.get(Self.osmAnd(fresh, token: field.token)).status == 200)
            let started = try RunStartedEvent(event: Event.parse(field.spectator.expect("run:ann")))
            #expect(started.timestamp == String(Int64(fresh.timestamp)))
        }
    }
}

extension PhoneBacklogTests {
    @Test func onePositionHoursAheadIsFilteredNotTakenForTheRunsNewest() async throws {
        try await Self.withField { server, field, store in
            let fixes = Self.queue(count: 30)
            var broken = fixes[10]
            broken.timestamp += 5 * 3600  // a phone's clock gone wrong for one position
            try Self.send(Array(fixes[..<10]) + [broken] + Array(fixes[10...]), field)
            let (stored, lines) = try Self.stop(field, store: store)
            #expect(stored.record.rejections == [.future: 1] || stored.record.rejections.isEmpty)
            #expect(stored.record.distance == Self.measuredLive(fixes).distance)
            #expect(try store.fixes(ofRun: stored.record.id).filter { $0.rejection == .future }.count == 1)
            // The positions after it were the run's newest, not late ones: the freshest have a current pace.
            let last = try PaceEvent(event: Event.parse(try #require(lines.last { $0.hasPrefix("pace:") })))
            #expect(last.timestamp == String(Int64(fixes.last!.timestamp)) && last.current != nil, "\(lines.filter { $0.hasPrefix("pace:") }.suffix(3))")
            _ = server
        }
    }
}
