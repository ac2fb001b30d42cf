@testable import LiveCore
import Foundation
import HTTP
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// Phones in the field (issue 25), with the requests the apps send: batches (the background-geolocation
/// library's `location` array, Traccar Client 10's flat array), positions without a time, OwnTracks with
/// encryption on, an SOS in each form, the battery crossing 15%.
@Suite struct PhoneFormsTests {
    typealias Backlog = PhoneBacklogTests

    /// A runner still connected over TCP (for `device:list`), its phone's token, a spectator, a coach and the app.
    struct Field {
        let runner: PureClient
        let key: String
        let token: String
        let spectator: PureClient
        let coach: PureClient
        let app: PureWebClient
    }

    static func withField(_ body: @escaping @Sendable (PureServer, Field, MemoryRunStore) throws -> Void) async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            try withPureServer(store: store) { server in
                let (runner, key) = try connectRunner("ann", to: server)
                let token = try DeviceAppTests.deviceToken(runner)
                let spectator = server.connect()
                try spectator.send("watch:ann")
                try spectator.expectNext("ok:watch")
                let coach = server.connect()
                try coach.send("coach:ann")
                try coach.expectNext("ok:coach")
                let field = Field(runner: runner, key: key, token: token, spectator: spectator, coach: coach,
                                  app: server.web())
                try body(server, field, store)
            }
        }
    }

    /// Ends the run from the page, and the run as stored.
    static func stop(_ field: Field, store: MemoryRunStore) throws -> StoredRun {
        let stopped = try field.app.post("/runners/ann/stop", body: "key=\(field.key)", type: "application/x-www-form-urlencoded")
        #expect(stopped.status == 200, "\(stopped)")
        let runID = try #require(Int64(stopped.text.filter(\.isNumber)))
        store.flush()
        return try #require(try store.run(id: runID))
    }

    static func json(_ body: String, to path: String = "/osmand", headers: String = "") -> String {
        PhoneFixtures.json(body, to: path, headers: headers)
    }

    /// One position in the background-geolocation library's form (Traccar Client 9).
    static func location(_ fix: Fix, extras: String = "", alarm: String? = nil, battery: Double = 0.8) -> String {
        #"{"timestamp":"\#(ISODate.string(unixSeconds: fix.timestamp))","coords":{"latitude":\#(fix.latitude),"#
            + #""longitude":\#(fix.longitude),"accuracy":5,"speed":3,"heading":0,"altitude":10},"is_moving":true,"#
            + #""battery":{"level":\#(battery),"is_charging":false}\#(alarm.map { #","alarm":"\#($0)""# } ?? "")"#
            + #"\#(extras.isEmpty ? "" : #","extras":\#(extras)"#)}"#
    }

    /// The fixes the store has of a run, before any flush: what an answer said is stored must be.
    static func storedNow(_ store: MemoryRunStore, ofRunOf runner: String) throws -> [StoredFix] {
        guard let run = try store.runs(of: runner, offset: 0, limit: 1).first else { return [] }
        return try store.fixes(ofRun: run.id)
    }

    @Test func aJSONBatchOfFiftyIsStoredWholeBeforeItsOneAnswer() async throws {
        try await Self.withField { server, field, store in
            let fixes = Backlog.queue(count: 50)
            let body = #"{"location":[\#(fixes.map { Self.location($0) }.joined(separator: ","))],"device_id":"\#(field.token)"}"#
            try field.app.send(Self.json(body))
            let answer = try field.app.response()
            #expect(answer.status == 200 && answer.text == "{}\n", "\(answer)")
            #expect(try Self.storedNow(store, ofRunOf: "ann").count == 50, "answered only once all 50 are stored")
            let stored = try Self.stop(field, store: store)
            try Backlog.expectMeasuredInTimeOrder(stored, fixes, store: store, server)
            let lines = try field.spectator.lines(until: "end:ann", timeout: 10) { $0.hasPrefix("end:ann") }
            #expect(lines.contains { $0.hasPrefix("run:ann") } && lines.contains { $0.hasPrefix("pace:ann") })
        }
    }

    @Test func traccarClientTensFlatArrayIsStoredWhole() async throws {
        try await Self.withField { server, field, store in
            let fixes = Backlog.queue(count: 40)
            let items = fixes.map { fix in
                #"{"id":"\#(field.token)","lat":\#(fix.latitude),"lon":\#(fix.longitude),"#
                    + #""timestamp":\#(Int64(fix.timestamp)),"accuracy":5,"speed":3,"batt":77}"#
            }
            try field.app.send(Self.json("[" + items.joined(separator: ",") + "]"))
            let answer = try field.app.response()
            #expect(answer.status == 200, "\(answer)")
            #expect(try Self.storedNow(store, ofRunOf: "ann").count == 40)
            try Backlog.expectMeasuredInTimeOrder(try Self.stop(field, store: store), fixes, store: store, server)
            // The runner's list of phones says which app and the battery.
            try field.runner.send("device:list")
            let phone = try DeviceEvent(event: Event.parse(field.runner.expect("device:ann")))
            #expect(phone.battery == 77 && phone.seen != nil && phone.encrypted == false)
        }
    }

    @Test func aPositionWithoutATimeTakesTheTimeOfReceipt() async throws {
        try await Self.withField { server, field, store in
            let track = Backlog.queue(count: 3)
            var received: [Double] = []
            for fix in track {
                server.advance(by: 4)  // a phone's interval
                received.append(server.now)
                let answer = try field.app.get("/osmand?id=\(field.token)&lat=\(fix.latitude)&lon=\(fix.longitude)&accuracy=5")
                #expect(answer.status == 200, "\(answer)")
            }
            let fixes = try Self.storedNow(store, ofRunOf: "ann")
            #expect(fixes.count == 3)
            for (stored, arrived) in zip(fixes, received) {
                #expect(abs(stored.fix.timestamp - arrived) < 0.001, "stamped with the server's clock as it arrived")
            }
            _ = try field.spectator.expect("run:ann")
        }
    }

    @Test func encryptedOwnTracksIsToldToTheRunnerNotSwallowed() async throws {
        try await Self.withField { _, field, _ in
            let auth = "Authorization: \(HTTPBasicCredentials(user: "ann", password: field.token).authorization)\r\n"
            try field.app.send(Self.json(#"{"_type":"encrypted","data":"q83vEjRWeJA="}"#, to: "/owntracks", headers: auth))
            let answer = try field.app.response()
            #expect(answer.status == 200 && answer.text == "[]\n")
            try field.runner.send("device:list")
            let phone = try DeviceEvent(event: Event.parse(field.runner.expect("device:ann")))
            #expect(phone.encrypted && phone.app == "OwnTracks")
            #expect(phone.note?.contains("Encryption") == true, "\(phone.note ?? "")")
            // The page's box reads the same.
            try field.app.send("GET /runners/ann/devices HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(field.key)\r\n\r\n")
            let listed = try field.app.response()
            let devices = try #require((try JSONSerialization.jsonObject(with: Data(listed.body)) as? [String: Any])?["devices"]
                                        as? [[String: Any]])
            #expect(devices.first?["encrypted"] as? Bool == true, "\(listed.text)")
        }
    }

    enum SOSForm: String, CaseIterable, Sendable { case query, form, locationAlarm, extrasAlarm }

    @Test(arguments: SOSForm.allCases)
    func anSOSReachesCoachesAndSpectatorsAtOnceWithThePosition(form: SOSForm) async throws {
        try await Self.withField { _, field, _ in
            let fixes = Backlog.queue(count: 30)
            let sos = fixes.last!
            let stamp = String(Int64(sos.timestamp))
            switch form {
            case .query:
                try Backlog.send(Array(fixes.dropLast()), .init(key: field.key, token: field.token,
                                                               spectator: field.spectator, app: field.app))
                #expect(try field.app.get(Backlog.osmAnd(sos, token: field.token) + "&alarm=sos").status == 200)
            case .form:
                try Backlog.send(Array(fixes.dropLast()), .init(key: field.key, token: field.token,
                                                               spectator: field.spectator, app: field.app))
                let body = "id=\(field.token)&lat=\(sos.latitude)&lon=\(sos.longitude)&timestamp=\(stamp)&accuracy=5&alarm=sos"
                #expect(try field.app.post("/osmand", body: body, type: "application/x-www-form-urlencoded").status == 200)
            case .locationAlarm, .extrasAlarm:
                // The alarm comes last in a backlog of 30: it is not held behind them.
                let items = fixes.dropLast().map { Self.location($0) }
                    + [form == .locationAlarm ? Self.location(sos, alarm: "SOS") : Self.location(sos, extras: #"{"alarm":"sos"}"#)]
                try field.app.send(Self.json(#"{"location":[\#(items.joined(separator: ","))],"device_id":"\#(field.token)"}"#))
                #expect(try field.app.response().status == 200)
            }
            for follower in [field.coach, field.spectator, field.runner] {
                let line = try follower.expect("alert:ann")
                let alert = try AlertEvent(event: Event.parse(line))
                #expect(alert.alert == "sos" && alert.timestamp == stamp, "\(line)")
                #expect(alert.latitude == sos.latitude && alert.longitude == sos.longitude, "\(line)")
            }
            if form == .locationAlarm || form == .extrasAlarm {
                // Sent before the backlog's run: and paces on the spectator's connection.
                let seen = try field.spectator.lines(until: "the backlog's last pace", timeout: 10) {
                    $0.hasPrefix("pace:ann") && $0.contains("ts=\(String(Int64(fixes[fixes.count - 2].timestamp))) ")
                        || $0.hasPrefix("pace:ann") && $0.hasSuffix("ts=\(String(Int64(fixes[fixes.count - 2].timestamp)))")
                }
                #expect(!seen.contains { $0.hasPrefix("alert:ann kind=sos") }, "the SOS came first, alone")
            }
            // The same alarm sent again (the app did not get the answer) raises no second SOS.
            #expect(try field.app.get(Backlog.osmAnd(sos, token: field.token) + "&alarm=sos").status == 200)
            try field.coach.send("ping:")
            let after = try field.coach.lines(until: "ok:ping") { $0.hasPrefix("ok:ping") }
            #expect(!after.contains { $0.contains("kind=sos") }, "\(after)")
        }
    }

    @Test func theBatteryFallingBelowFifteenPercentAlertsTheCoachOnce() async throws {
        try await Self.withField { _, field, _ in
            let fixes = Backlog.queue(count: 8)
            let levels = [30, 22, 16, 14, 13, 16, 12, 11]
            for (fix, level) in zip(fixes, levels) {
                #expect(try field.app.get(Backlog.osmAnd(fix, token: field.token) + "&batt=\(level)").status == 200)
            }
            try field.coach.send("ping:")
            let lines = try field.coach.lines(until: "ok:ping") { $0.hasPrefix("ok:ping") }
            let low = try lines.filter { $0.hasPrefix("alert:ann kind=battery_low") }.map { try AlertEvent(event: Event.parse($0)) }
            #expect(low.count == 1 && low.first?.battery == 14, "\(lines)")
            try field.runner.send("device:list")
            #expect(try DeviceEvent(event: Event.parse(field.runner.expect("device:ann"))).battery == 11)
        }
    }
}

extension PhoneFormsTests {
    @Test func aCatchUpBurstRaisesNoOffPaceAlert() async throws {
        try await Self.withField { _, field, store in
            // A target of 3:00/km; the recorded run is near 4:00/km, far outside the 5% margin: live, the coach
            // would hear off_pace after a minute of it.
            try field.runner.send("goal:10000 1800")
            try field.runner.expect("ok:goal")
            let fixes = Backlog.queue(count: 150, endingAgo: 60)  // 10 minutes, all sent a minute or more late
            try Backlog.send(fixes, .init(key: field.key, token: field.token, spectator: field.spectator, app: field.app))
            try field.coach.send("ping:")
            let heard = try field.coach.lines(until: "ok:ping") { $0.hasPrefix("ok:ping") }
            #expect(!heard.contains { $0.contains("kind=off_pace") }, "\(heard)")
            #expect(heard.contains { $0.hasPrefix("run:ann") }, "the coach did hear the run")
            // Sent live, the same positions raise it: the burst's paces are the runner's, just not now.
            let live = RunTracker.offPaceAlerts(of: fixes, goal: 10000, target: 1800)
            #expect(live > 0)
            _ = store
        }
    }
}

extension RunTracker {
    /// How many off-pace changes a goal's watch sees for these fixes measured live (as the server would).
    static func offPaceAlerts(of fixes: [Fix], goal: Double, target: Double) -> Int {
        var tracker = RunTracker(configuration: ServerConfiguration().tracker.keepingTrack(false))
        var monitor = OffPaceMonitor(targetPace: target / goal * 1000, margin: 0.05)
        var changes = 0
        for fix in fixes {
            guard case .accepted(let progress) = tracker.add(fix, now: fix.timestamp) else { continue }
            if monitor.observe(currentPace: progress.snapshot.currentPace, at: fix.timestamp) != nil { changes += 1 }
        }
        return changes
    }
}
