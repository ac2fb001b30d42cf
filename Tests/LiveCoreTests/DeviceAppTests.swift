@testable import LiveCore
import Foundation
import HTTP
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// Phone apps over HTTP, as they send: one request per position, answered 200 only once it is stored, the
/// run seen by a TCP spectator and a web spectator, and ended after the device idle gap.
@Suite struct DeviceAppTests {
    static var track: [Fix] { PhoneFixtures.track }
    static var recorded: [Fix] { PhoneFixtures.recorded }

    enum Format: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case osmAndGET, osmAndPOST, traccarJSON, ownTracksBasic, ownTracksHeaders
        var testDescription: String { rawValue }

        /// The request an app sends for one fix.
        func request(_ fix: Fix, token: String, runner: String) -> String {
            let stamp = String(Int64(fix.timestamp))
            let altitude = fix.altitude ?? 0
            switch self {
            case .osmAndGET:
                return "GET /osmand?id=\(token)&timestamp=\(stamp)&lat=\(fix.latitude)&lon=\(fix.longitude)&accuracy=5&batt=80"
                    + "&altitude=\(altitude) HTTP/1.1\r\nHost: t\r\n\r\n"
            case .osmAndPOST:
                return "POST /osmand?id=\(token)&timestamp=\(stamp)&lat=\(fix.latitude)&lon=\(fix.longitude)&accuracy=5"
                    + "&altitude=\(altitude) HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"
            case .traccarJSON:
                let body = #"{"location":{"timestamp":"\#(ISODate.string(unixSeconds: fix.timestamp))","coords":"#
                    + #"{"latitude":\#(fix.latitude),"longitude":\#(fix.longitude),"accuracy":5,"speed":3,"heading":0,"#
                    + #""altitude":\#(altitude)},"is_moving":true,"odometer":0,"battery":{"level":0.9,"is_charging":false},"#
                    + #""activity":{"type":"running"}},"device_id":"\#(token)"}"#
                return "POST /osmand HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            case .ownTracksBasic, .ownTracksHeaders:
                let body = #"{"_type":"location","lat":\#(fix.latitude),"lon":\#(fix.longitude),"tst":\#(stamp),"acc":5,"tid":"an","#
                    + #""alt":\#(altitude)}"#
                let auth = self == .ownTracksBasic
                    ? "Authorization: \(HTTPBasicCredentials(user: runner, password: token).authorization)\r\n"
                    : "X-Limit-U: \(runner)\r\nX-Limit-D: \(token)\r\n"
                return "POST /owntracks HTTP/1.1\r\nHost: t\r\n\(auth)Content-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            }
        }
    }

    static func deviceToken(_ runner: some LineClient) throws -> String { try PhoneFixtures.deviceToken(runner) }

    @Test(arguments: Format.allCases)
    func aRecordedRunThroughTheAppReachesSpectatorsAndEndsAfterTheIdleGap(format: Format) async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            // 3 s: long enough that a slowed (sanitized) run never pauses that long between two posts, which
            // would end the run midway.
            try withPureServer({ $0.deviceIdle = 3 }, store: store) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let token = try Self.deviceToken(ann)
                ann.close()  // the phone app takes over; nobody holds a TCP connection for ann
                let tcp = server.connect()
                try tcp.send("watch:ann")
                try tcp.expectNext("ok:watch")
                let web = server.web()
                _ = try web.openStream("watch=ann")
                let app = server.web()
                let fixes = Array(Self.recorded.prefix(250))
                for fix in fixes {
                    try app.send(format.request(fix, token: token, runner: "ann"))
                    let answer = try app.response()
                    #expect(answer.status == 200, "\(answer)")
                    if format == .ownTracksBasic || format == .ownTracksHeaders { #expect(answer.text == "[]\n") }
                }
                // Every answered position is stored, once.
                let run = try RunStartedEvent(event: Event.parse(tcp.expect("run:ann")))
                #expect(try store.fixes(ofRun: run.runID).count == fixes.count)
                // The idle gap ends the run, saved, for both spectators.
                let end = try RunEndedEvent(event: Event.parse(tcp.expect("end:ann", timeout: 10)))
                #expect(end.reason == .idle && end.saved && end.distance > 1000)
                // The app's altitudes are stored with the fixes and measured: end: and the stored run say the gain.
                let stored = try store.fixes(ofRun: run.runID)
                #expect(stored.map(\.fix.altitude) == fixes.map(\.altitude))
                let measured = try #require(ElevationMeter.measure(stored.filter(\.isAccepted).map(\.fix)))
                let gain = try #require(end.elevationGain), loss = try #require(end.elevationLoss)
                #expect(abs(gain - measured.gain) <= 0.05 && abs(loss - measured.loss) <= 0.05)
                store.flush()
                let record = try #require(try store.run(id: run.runID)?.record)
                #expect(record.elevationGain == measured.gain && record.elevationLoss == measured.loss,
                        "stored \(String(describing: record.elevationGain)), measured \(measured.gain)")
                let streamed = try web.events(until: "end", timeout: 10)
                #expect(streamed.contains { $0.event == "badge" })
                #expect(streamed.last?.json["reason"] as? String == "idle")
                #expect(streamed.last?.json["gain"] as? Double == gain)
                // The next position starts a new run.
                let later = Fix(latitude: fixes[0].latitude, longitude: fixes[0].longitude, accuracy: 5,
                                timestamp: Date().timeIntervalSince1970.rounded(.down))
                try app.send(format.request(later, token: token, runner: "ann"))
                #expect(try app.response().status == 200)
                #expect(try RunStartedEvent(event: Event.parse(tcp.expect("run:ann"))).runID != run.runID)
            }
        }
    }

    @Test func unknownWrongUserAndRevokedTokensAre403AndGuessingIsLimited() async throws {
        try await onItsOwnThread {
            try withPureServer({ $0.deviceFailuresPerMinute = 1 }) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let token = try Self.deviceToken(ann)
                let app = server.web()
                let fix = Self.recorded[0]
                #expect(try app.get("/osmand?id=\(token)&timestamp=\(Int64(fix.timestamp))&lat=\(fix.latitude)&lon=\(fix.longitude)")
                    .status == 200)
                // OwnTracks naming another runner with ann's token.
                try app.send(Format.ownTracksBasic.request(fix, token: token, runner: "bob"))
                let wrongUser = try app.response()
                #expect(wrongUser.status == 403 && wrongUser.text.contains("user is not this device token's runner"))
                try ann.send("undevice:\(token)")
                #expect(try OkEvent(event: Event.parse(ann.expect("ok:undevice")))["count"] == "1")
                #expect(try app.get("/osmand?id=\(token)&timestamp=\(Int64(fix.timestamp) + 1)&lat=1&lon=1").status == 403)
                // Slowed past the limit (1 a minute here), refused past five times it.
                for guess in 1...3 { #expect(try app.get("/osmand?id=guess\(guess)&timestamp=1&lat=1&lon=1").status == 403) }
                #expect(try app.get("/osmand?id=guess4&timestamp=1&lat=1&lon=1").status == 429, "after five wrong tokens")
                #expect(try app.awaitClose())
                try ann.send("undevice:nosuchtoken")
                try ann.expect("err:not_found")
            }
        }
    }

    @Test func theRunnersPageConnectsAPhoneAndStopsTheRunWithTheKey() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, key) = try connectRunner("ann", to: server)
                let web = server.web()
                try web.send("POST /runners/ann/devices HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(key)\r\nContent-Length: 0\r\n\r\n")
                let made = try web.response()
                #expect(made.status == 201, "\(made)")
                let token = try #require((try JSONSerialization.jsonObject(with: Data(made.body)) as? [String: Any])?["token"] as? String)
                let fix = Self.recorded[0]
                #expect(try web.get("/osmand?id=\(token)&timestamp=\(Int64(fix.timestamp))&lat=\(fix.latitude)&lon=\(fix.longitude)")
                    .status == 200)
                let runID = try RunStartedEvent(event: Event.parse(ann.expect("run:ann"))).runID
                #expect(try web.post("/runners/ann/stop", body: "key=wrong0", type: "application/x-www-form-urlencoded").status == 403)
                let stopped = try web.post("/runners/ann/stop", body: "key=\(key)", type: "application/x-www-form-urlencoded")
                #expect(stopped.status == 200 && stopped.text == #"{"run":\#(runID)}"#, "\(stopped)")
                #expect(try RunEndedEvent(event: Event.parse(ann.expect("end:ann"))).reason == .stop)
                #expect(try web.post("/runners/ann/stop", body: "key=\(key)", type: "application/x-www-form-urlencoded").status == 409)
                #expect(try web.post("/runners/nobody/devices", body: "key=\(key)", type: "application/x-www-form-urlencoded")
                    .status == 403)
            }
        }
    }

    @Test func malformedPositionsAre400AndChangeNothing() async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            try withPureServer(store: store) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let token = try Self.deviceToken(ann)
                let app = server.web()
                for query in ["id=\(token)&timestamp=1&lon=2", "id=\(token)&timestamp=1&lat=abc&lon=2", "id=\(token)&timestamp=1&lat=95&lon=2"] {
                    let answer = try app.get("/osmand?\(query)")
                    #expect(answer.status == 400 && !answer.text.isEmpty, "\(query): \(answer)")
                }
                #expect(try app.post("/owntracks", body: "not json", type: "application/json").status == 400)
                store.flush()
                #expect(try store.runs(of: "ann", offset: 0, limit: 5).isEmpty)
            }
        }
    }
}
