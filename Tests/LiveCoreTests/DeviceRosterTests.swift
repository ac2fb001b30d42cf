@testable import LiveCore
import Foundation
import HTTP
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// The runner's own view of their phones: `device:LABEL`, `device:list` (label, last app, when, battery, and an
/// OwnTracks phone sending encrypted messages), `undevice:ID`, and the page's `GET /runners/NAME/devices`.
@Suite struct DeviceRosterTests {
    let output = RecordingOutput()
    let store = MemoryRunStore()
    let runner = ConnectionID(1), other = ConnectionID(2)
    let start = 1_700_000_000.0

    /// A hub with ann identified on `runner` and bob on `other`.
    func hub() -> HubDriver {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        hub.connected(runner, now: start)
        hub.connected(other, now: start)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        hub.received(.identify(name: "bob", key: nil), from: other, now: start)
        return hub
    }

    /// The lines `connection` got since `from`.
    func lines(for connection: ConnectionID, from: Int) -> [String] {
        output.lines[from...].filter { $0.0 == connection }.map(\.1)
    }

    /// `device:list` on `connection`: its `device:` lines, typed, after checking the closing `done:`.
    func list(_ hub: HubDriver, on connection: ConnectionID) throws -> [DeviceEvent] {
        let from = output.lines.count
        hub.received(.listDevices, from: connection, now: start)
        let answer = lines(for: connection, from: from)
        let done = try DoneEvent(event: Event.parse(try #require(answer.last)))
        #expect(done.what == "device" && done.count == answer.count - 1 && !done.more)
        return try answer.dropLast().map { line throws in try DeviceEvent(event: Event.parse(line)) }
    }

    /// `device:` / `device:LABEL` on `connection`: the token (each made a second after the one before).
    func addDevice(_ hub: HubDriver, label: String?, on connection: ConnectionID) throws -> String {
        let from = output.lines.count
        hub.received(.addDevice(label: label), from: connection, now: start + Double(hub.deviceRoster.count + 1))
        let answer = try #require(lines(for: connection, from: from).last)
        return try #require(try OkEvent(event: Event.parse(answer))["token"])
    }

    @Test func theListShowsEachPhonesLabelAppLastPositionAndBattery() throws {
        let hub = hub()
        #expect(try list(hub, on: runner).isEmpty)
        let pixel = try addDevice(hub, label: "Ann's Pixel", on: runner)
        let watch = try addDevice(hub, label: nil, on: runner)
        _ = try addDevice(hub, label: "Bob's", on: other)
        var phones = try list(hub, on: runner)
        #expect(phones.map(\.label) == ["Ann's Pixel", nil], "only ann's, oldest first")
        #expect(phones[0].id == String(RunnerKey.hash(pixel).prefix(8)) && phones[0].created == start + 1)
        #expect(phones.allSatisfy { $0.app == nil && $0.seen == nil && $0.battery == nil && !$0.encrypted })

        hub.deviceReported(token: pixel, runner: "ann", app: "Traccar Client", battery: 81, now: start + 60)
        hub.deviceReported(token: watch, runner: "bob", app: "OsmAnd", battery: 5, now: start + 60)  // not bob's: ignored
        hub.deviceReported(token: "unknown0", runner: "ann", app: "OsmAnd", battery: 5, now: start + 60)
        phones = try list(hub, on: runner)
        #expect(phones[0].app == "Traccar Client" && phones[0].seen == start + 60 && phones[0].battery == 81)
        #expect(phones[1].app == nil && phones[1].seen == nil)
        // A later post without a battery level keeps the last one reported.
        hub.deviceReported(token: pixel, runner: "ann", app: "Traccar Client", battery: nil, now: start + 120)
        phones = try list(hub, on: runner)
        #expect(phones[0].seen == start + 120 && phones[0].battery == 81)
        // Nobody else lists ann's phones: bob sees his own.
        #expect(try list(hub, on: other).map(\.label) == ["Bob's"])
    }

    @Test func anEncryptedOwnTracksPhoneIsFlaggedUntilItSendsAReadablePosition() throws {
        let hub = hub()
        let phone = try addDevice(hub, label: "iPhone", on: runner)
        hub.deviceSentEncrypted(token: phone, now: start + 10)
        hub.deviceSentEncrypted(token: "unknown0", now: start + 10)
        var listed = try #require(try list(hub, on: runner).first)
        #expect(listed.encrypted && listed.app == "OwnTracks" && listed.seen == nil)
        #expect(listed.note == DeviceEvent.encryptedNote)
        #expect(lines(for: runner, from: 0).contains { $0.contains("encrypted=yes note=\"") })
        hub.deviceReported(token: phone, runner: "ann", app: "OwnTracks", battery: 40, now: start + 20)
        listed = try #require(try list(hub, on: runner).first)
        #expect(!listed.encrypted && listed.note == nil && listed.seen == start + 20 && listed.battery == 40)
    }

    @Test func undeviceTakesTheListedIDAndTheRosterForgetsRevokedTokens() throws {
        let hub = hub()
        let first = try addDevice(hub, label: "one", on: runner)
        let second = try addDevice(hub, label: "two", on: runner)
        let bobs = try addDevice(hub, label: "bob's", on: other)
        let firstID = try #require(try list(hub, on: runner).first?.id)
        var from = output.lines.count
        hub.received(.removeDevice(token: String(RunnerKey.hash(bobs).prefix(8))), from: runner, now: start)
        #expect(lines(for: runner, from: from).first?.hasPrefix("err:not_found") == true, "not ann's")
        from = output.lines.count
        hub.received(.removeDevice(token: firstID.uppercased()), from: runner, now: start)
        #expect(lines(for: runner, from: from) == ["ok:undevice count=1"])
        #expect(hub.runnerName(forDeviceToken: first) == nil && hub.runnerName(forDeviceToken: second) == "ann")
        #expect(try list(hub, on: runner).map(\.label) == ["two"])
        hub.received(.removeDevice(token: second), from: runner, now: start)
        #expect(try list(hub, on: runner).isEmpty)
        #expect(hub.deviceRoster.count == 1, "only bob's token is left")
        store.flush()
        #expect(try store.deviceTokens().map(\.label) == ["bob's"])
    }

    @Test func labelsAreStoredAndReadBackAtStart() throws {
        let hub = hub()
        _ = try addDevice(hub, label: "Ann's Pixel", on: runner)
        store.flush()
        let restarted = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        restarted.loadDevices()
        let entry = try #require(restarted.deviceRoster.values.first)
        #expect(entry.token.label == "Ann's Pixel" && entry.token.runner == "ann" && entry.seen == nil)
    }

    // MARK: Over the wire

    static func osmAnd(token: String, at time: Double) -> String {
        "/osmand?id=\(token)&timestamp=\(Int64(time))&lat=48.8566&lon=2.3522&accuracy=5&batt=77"
    }

    @Test func aPhonePostingOverHTTPShowsInTheListAndOnThePage() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, key) = try connectRunner("ann", to: server)
                try ann.send("device:Ann's Pixel")
                let token = try #require(try OkEvent(event: Event.parse(ann.expect("ok:device")))["token"])
                let app = server.web()
                let now = Date().timeIntervalSince1970.rounded(.down)
                #expect(try app.get(Self.osmAnd(token: token, at: now)).status == 200)
                try ann.send("device:list")
                let line = try ann.expect("device:ann")
                let listed = try DeviceEvent(event: Event.parse(line))
                #expect(listed.label == "Ann's Pixel" && listed.id == String(RunnerKey.hash(token).prefix(8)), "\(line)")
                #expect(listed.app == "OsmAnd protocol" && !listed.encrypted, "\(line)")
                #expect(abs((listed.seen ?? 0) - now) < 30, "\(line)")
                #expect(try DoneEvent(event: Event.parse(ann.expectNext("done:device"))).count == 1)

                // OwnTracks with a secret key set, a while later (the list is oldest first): the list and the
                // page say so.
                server.advance(by: 2)
                try ann.send("device:")
                let ownTracks = try #require(try OkEvent(event: Event.parse(ann.expect("ok:device")))["token"])
                let body = #"{"_type":"encrypted","data":"n0tR3adab1e+base64=="}"#
                try app.send("POST /owntracks HTTP/1.1\r\nHost: t\r\n"
                    + "Authorization: \(HTTPBasicCredentials(user: "ann", password: ownTracks).authorization)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                let answered = try app.response()
                #expect(answered.status == 200 && answered.text == "[]\n", "\(answered)")
                try ann.send("device:list")
                let lines = try ann.lines(until: "done:device") { $0.hasPrefix("done:device") }.filter { $0.hasPrefix("device:") }
                let encrypted = try #require(try lines.map { line throws in try DeviceEvent(event: Event.parse(line)) }.last)
                #expect(lines.count == 2 && encrypted.encrypted && encrypted.app == "OwnTracks" && encrypted.note != nil, "\(lines)")

                // The page: the list with the key, a labelled token, a wrong key refused.
                let web = server.web()
                let page = try web.get("/runners/ann/devices", headers: "Authorization: Bearer \(key)\r\n")
                #expect(page.status == 200 && page.headers.contains { $0 == ("Cache-Control", "no-store") }, "\(page)")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])
                let phones = try #require(json["devices"] as? [[String: Any]])
                #expect(phones.count == 2 && phones[0]["label"] as? String == "Ann's Pixel" && phones[0]["encrypted"] as? Bool == false)
                #expect(phones[0]["id"] as? String == listed.id && phones[0]["app"] as? String == "OsmAnd protocol")
                #expect(phones[1]["label"] is NSNull && phones[1]["encrypted"] as? Bool == true && phones[1]["note"] is String)
                #expect(try web.get("/runners/ann/devices", headers: "Authorization: Bearer wrong0\r\n").status == 403)
                #expect(try web.get("/runners/ann/devices").status == 403)
                #expect(try web.get("/runners/nobody/devices", headers: "Authorization: Bearer \(key)\r\n").status == 403)
                let made = try web.post("/runners/ann/devices", body: "key=\(key)&label=Ann%27s+watch",
                                        type: "application/x-www-form-urlencoded")
                #expect(made.status == 201, "\(made)")
                let tooLong = String(repeating: "x", count: 41)
                #expect(try web.post("/runners/ann/devices", body: "key=\(key)&label=\(tooLong)",
                                     type: "application/x-www-form-urlencoded").status == 400)
                try ann.send("device:list")
                #expect(try ann.lines(until: "done:device") { $0.hasPrefix("done:device") }
                    .contains { $0.contains(#"label="Ann's watch""#) })
                // Revoked by the listed id: the app's posts are refused from then on.
                try ann.send("undevice:\(listed.id)")
                #expect(try OkEvent(event: Event.parse(ann.expect("ok:undevice")))["count"] == "1")
                #expect(try app.get(Self.osmAnd(token: token, at: now + 1)).status == 403)
            }
        }
    }
}
