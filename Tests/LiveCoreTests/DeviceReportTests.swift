@testable import LiveCore
import HTTP
import MoonRunnerTestSupport
import Testing
import Wire

/// Every app's request shape read into a fix, without sockets.
@Suite struct DeviceReportTests {
    /// The time of receipt the tests give (2026-12-01 07:00:00 UTC).
    static let now = 1_796_108_400.0

    func request(_ head: String, body: String = "") throws -> HTTPRequest {
        var parser = HTTPRequestParser(limits: HTTPLimits(maximumBodyBytes: 1 << 20))  // room for a batch of 1,000
        let bodyPart = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
        parser.append(Array((head + "\r\nHost: t\r\n" + bodyPart + "\r\n" + body).utf8))
        return try #require(try parser.nextRequest())
    }

    @Test func osmAndQueryFormAsTraccarAndOsmAndSendIt() throws {
        let get = try DeviceReport.osmAnd(request(
            "GET /osmand?id=abc123&timestamp=1796000000&lat=48.8566&lon=2.3522&speed=3.1&bearing=90&altitude=35&accuracy=6&batt=87 HTTP/1.1"), now: Self.now)
        #expect(get.token == "abc123")
        #expect(get.location == LocationCommand(latitude: 48.8566, longitude: 2.3522, accuracy: 6, timestamp: 1_796_000_000,
                                                timestampText: "1796000000", altitude: 35))
        let post = try DeviceReport.osmAnd(request("POST /osmand?deviceid=abc123&timestamp=1796000000123&lat=1&lon=2&hdop=2 HTTP/1.1"), now: Self.now)
        #expect(post.location.timestamp == 1_796_000_000.123 && post.location.accuracy == 10)
        let form = try DeviceReport.osmAnd(request("POST /osmand HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded",
                                                   body: "id=abc123&location=48.1%2C11.5&timestamp=2026-12-01T08%3A00%3A00Z"), now: Self.now)
        #expect(form.location.latitude == 48.1 && form.location.longitude == 11.5 && form.location.timestamp == 1_796_112_000)
        let invalid = try DeviceReport.osmAnd(request("GET /osmand?id=a&timestamp=1796000000&lat=1&lon=2&valid=false HTTP/1.1"), now: Self.now)
        #expect(invalid.location.accuracy == .infinity, "the filter refuses it as inaccurate")
        #expect(DeviceReport.defaultAccuracy == 10)
    }

    @Test func everyAppsAltitudeComesInAndABadOneCostsOnlyTheAltitude() throws {
        let query = try DeviceReport.osmAnd(request(
            "GET /osmand?id=a&timestamp=1796000000&lat=1&lon=2&altitude=-12.5 HTTP/1.1"), now: Self.now)
        #expect(query.location.altitude == -12.5)
        let form = try DeviceReport.osmAnd(request("POST /osmand HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded",
                                                   body: "id=a&lat=1&lon=2&timestamp=1796000000&altitude=412"), now: Self.now)
        #expect(form.location.altitude == 412)
        let json = #"{"location":{"timestamp":"2026-12-01T08:00:00Z","coords":{"latitude":1,"longitude":2,"altitude":88.25}},"#
            + #""device_id":"a"}"#
        let traccar = try DeviceReport.osmAnd(request("POST /osmand HTTP/1.1\r\nContent-Type: application/json", body: json),
                                              now: Self.now)
        #expect(traccar.location.altitude == 88.25)
        let owntracks = try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1\r\nX-Limit-U: a\r\nX-Limit-D: b",
                                                           body: #"{"_type":"location","lat":1,"lon":2,"tst":1796000000,"alt":1234}"#),
                                                   now: Self.now)
        #expect(owntracks.location.altitude == 1234)
        // No altitude, a word, or one past any mountain: the position stands, without altitude.
        for altitude in ["", "&altitude=high", "&altitude=99999"] {
            let report = try DeviceReport.osmAnd(request(
                "GET /osmand?id=a&timestamp=1796000000&lat=1&lon=2\(altitude) HTTP/1.1"), now: Self.now)
            #expect(report.location.altitude == nil && report.location.latitude == 1)
        }
    }

    @Test func traccarClient9JSON() throws {
        let body = #"{"location":{"timestamp":"2026-12-01T08:00:00.500+01:00","coords":{"latitude":48.85,"longitude":2.35,"#
            + #""accuracy":4.5,"speed":3,"heading":10,"altitude":30},"is_moving":true,"odometer":12,"battery":{"level":0.8,"#
            + #""is_charging":false},"activity":{"type":"running"}},"device_id":"tok42"}"#
        let report = try DeviceReport.osmAnd(request("POST /osmand HTTP/1.1\r\nContent-Type: application/json", body: body), now: Self.now)
        #expect(report.token == "tok42" && report.location.accuracy == 4.5)
        #expect(report.location.timestamp == 1_796_112_000 - 3600 + 0.5)
        #expect(report.location.timestampText == "1796108400.5")
        #expect(report.positions == [DevicePosition(location: report.location, battery: 80)], "a fraction read as percent")
        #expect(report.app == "Traccar Client (JSON)")
    }

    @Test func ownTracksRefusesAStampPastAnyClock() throws {
        let body = #"{"_type":"location","lat":1,"lon":1,"tst":1e30}"#
        #expect(throws: DeviceReport.Problem.self) {
            try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1\r\nX-Limit-U: a\r\nX-Limit-D: b", body: body), now: Self.now)
        }
    }

    @Test(arguments: [(1_796_205_938.0001, "1796205938"), (1_796_205_939.9999, "1796205940"),
                      (1_796_205_938.25, "1796205938.25"), (1_796_205_938, "1796205938")])
    func stampsAreDecimalsWithoutATrailingPoint(time: Double, text: String) {
        // A fraction that rounds to whole milliseconds of 0 once left `1796205938.`, which no decimal parser takes.
        #expect(DeviceReport.stampText(time) == text)
    }

    @Test func ownTracksWithBasicAuthAndWithXLimitHeaders() throws {
        let body = #"{"_type":"location","lat":52.52,"lon":13.405,"tst":1796000000,"acc":8,"tid":"an","batt":80}"#
        let basic = HTTPBasicCredentials(user: "ann", password: "tok42").authorization
        let withAuth = try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1\r\nAuthorization: \(basic)", body: body), now: Self.now)
        #expect(withAuth.token == "tok42" && withAuth.user == "ann" && withAuth.location.accuracy == 8)
        let withHeaders = try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1\r\nX-Limit-U: ann\r\nX-Limit-D: tok42",
                                                             body: body), now: Self.now)
        #expect(withHeaders == withAuth)
        #expect(withAuth.positions == [DevicePosition(location: withAuth.location, battery: 80)] && withAuth.app == "OwnTracks")
        #expect(throws: DeviceReport.Problem.ignored) {
            try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1", body: #"{"_type":"waypoint","lat":1}"#), now: Self.now)
        }
    }

    @Test(arguments: [
        ("GET /osmand?timestamp=1&lat=1&lon=2 HTTP/1.1", "id"),
        ("GET /osmand?id=a&timestamp=1&lat=x&lon=2 HTTP/1.1", "lat"),
        ("GET /osmand?id=a&timestamp=1&lat=91&lon=2 HTTP/1.1", "within"),
        ("GET /osmand?id=a&timestamp=yesterday&lat=1&lon=2 HTTP/1.1", "timestamp"),
        ("GET /osmand?id=a&timestamp=1&lon=2 HTTP/1.1", "lat and lon"),
        // Past any clock (these once stopped the server converting them to an integer): refused, not crashed on.
        ("GET /osmand?id=a&timestamp=1e30&lat=1&lon=2 HTTP/1.1", "not a time"),
        ("GET /osmand?id=a&timestamp=\(String(repeating: "9", count: 30))&lat=1&lon=2 HTTP/1.1", "not a time"),
    ])
    func malformedPositionsSayWhy(head: String, word: String) throws {
        let parsed = try request(head)
        do throws(DeviceReport.Problem) {
            _ = try DeviceReport.osmAnd(parsed, now: Self.now)
            Issue.record("\(head) was accepted")
        } catch {
            guard case .malformed(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains(word), "\(reason)")
        }
    }

    // MARK: Issue 25: phones in the field (batches, no time, alarms, battery, encrypted OwnTracks)

    func osmAnd(_ head: String, body: String = "") throws -> DeviceReport {
        try DeviceReport.osmAnd(request(head, body: body), now: Self.now)
    }

    func ownTracks(_ head: String, body: String = "") throws -> DeviceReport {
        try DeviceReport.ownTracks(request(head, body: body), now: Self.now)
    }

    /// The reason a request is refused with, or nil (recorded as an issue) when it is not refused as malformed.
    func reason(_ problem: () throws -> DeviceReport) -> String? {
        do {
            let report = try problem()
            Issue.record("accepted: \(report)")
        } catch let error as DeviceReport.Problem {
            if case .malformed(let reason) = error { return reason }
            Issue.record("\(error)")
        } catch {
            Issue.record("\(error)")
        }
        return nil
    }

    static let json = "POST /osmand HTTP/1.1\r\nContent-Type: application/json"

    @Test func osmAndQueryAndFormCarryBatteryAlarmAndMayOmitTheTime() throws {
        let get = try osmAnd("GET /osmand?id=abc&lat=48.85&lon=2.35&batt=87.5&alarm=SOS HTTP/1.1")
        #expect(get.positions == [DevicePosition(
            location: LocationCommand(latitude: 48.85, longitude: 2.35, accuracy: 10, timestamp: Self.now, timestampText: "1796108400"),
            stampedOnReceipt: true, alarm: "sos", battery: 87.5)], "no timestamp: the time of receipt, as Traccar's server does")
        #expect(get.app == "OsmAnd protocol" && get.user == nil)
        let form = try osmAnd("POST /osmand HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nUser-Agent: Traccar Client/8.2",
                              body: "id=abc&lat=1&lon=2&timestamp=1796000000&batt=15&alarm=general")
        #expect(form.positions.count == 1 && form.location.timestamp == 1_796_000_000)
        #expect(!form.positions[0].stampedOnReceipt && form.positions[0].alarm == "general" && form.positions[0].battery == 15)
        #expect(form.app == "Traccar Client")
        let quiet = try osmAnd("GET /osmand?id=abc&lat=1&lon=2&timestamp=1796000000&batt=-1&alarm= HTTP/1.1")
        #expect(quiet.positions[0].battery == nil && quiet.positions[0].alarm == nil, "-1: the phone does not know")
    }

    @Test(arguments: [("Traccar Client/9.0.1 (Android 14)", "Traccar Client"), ("traccar-client/10", "Traccar Client"),
                      ("OsmAnd~ 4.7.9", "OsmAnd"), ("OsmAnd+/4.6", "OsmAnd"), ("Owntracks-Android/2.5.3", "OwnTracks"),
                      ("OwnTracks/17.2.1 CFNetwork/1490 Darwin/23.2.0", "OwnTracks"),
                      ("okhttp/4.12.0", "OsmAnd protocol"), ("Mozilla/5.0 (Linux) OwnTracks", "OsmAnd protocol")])
    func theAppIsTheUserAgentsFirstProductWhenKnown(agent: String, app: String) throws {
        let report = try osmAnd("GET /osmand?id=a&lat=1&lon=2 HTTP/1.1\r\nUser-Agent: \(agent)")
        #expect(report.app == app)
    }

    @Test func traccarClient9AlarmBatteryAndNoTime() throws {
        let body = #"{"location":{"coords":{"latitude":1,"longitude":2},"extras":{"alarm":"SOS"},"battery":{"level":-1}},"#
            + #""device_id":"tok42"}"#
        let report = try osmAnd(Self.json, body: body)
        #expect(report.positions == [DevicePosition(
            location: LocationCommand(latitude: 1, longitude: 2, accuracy: 10, timestamp: Self.now, timestampText: "1796108400"),
            stampedOnReceipt: true, alarm: "sos", battery: nil)])
        let direct = try osmAnd(Self.json, body: #"{"location":{"timestamp":1796000000,"coords":{"latitude":1,"longitude":2},"#
                                    + #""alarm":"sos","extras":{"alarm":"general"},"battery":{"level":0.07}},"device_id":"t"}"#)
        #expect(direct.positions[0].alarm == "sos" && direct.positions[0].battery == 7, "location.alarm first")
        #expect(direct.location.timestamp == 1_796_000_000 && !direct.positions[0].stampedOnReceipt)
    }

    @Test func traccarClient9BatchKeepsEveryPositionInOrder() throws {
        let locations = (0..<50).map { index in
            #"{"timestamp":"2026-12-01T06:00:\#(String(format: "%02d", index))Z","coords":{"latitude":48.\#(index + 10),"#
                + #""longitude":2.35,"accuracy":\#(index % 7 + 1)},"battery":{"level":0.5}}"#
        }
        let report = try osmAnd(Self.json, body: #"{"location":[\#(locations.joined(separator: ","))],"device_id":"tok42"}"#)
        #expect(report.token == "tok42" && report.positions.count == 50)
        #expect(report.positions.map(\.location.timestamp) == (0..<50).map { 1_796_104_800 + Double($0) })
        #expect(report.positions.map(\.location.latitude) == (0..<50).map { Double("48.\($0 + 10)")! })
        #expect(report.positions.allSatisfy { $0.battery == 50 && !$0.stampedOnReceipt && $0.alarm == nil })
        #expect(report.location == report.positions[0].location)
        let bad = #"{"location":[{"coords":{"latitude":1,"longitude":2}},{"coords":{"latitude":1}}],"device_id":"t"}"#
        #expect(reason { try osmAnd(Self.json, body: bad) } == "position 2: location.coords.latitude and longitude are missing")
    }

    @Test func traccarClient10FlatArray() throws {
        let body = #"[{"id":"tok42","lat":48.85,"lon":2.35,"timestamp":1796000000,"accuracy":5,"batt":80,"speed":3},"#
            + #"{"deviceid":"tok42","lat":"48.86","lon":"2.36","timestamp":"1796000001500","batt":"79"},"#
            + #"{"id":"tok42","location":"48.87,2.37","timestamp":"2026-12-01T06:00:02Z","alarm":"SOS","hdop":2},"#
            + #"{"id":"tok42","lat":48.88,"lon":2.38,"valid":false},{"id":"tok42","lat":48.89,"lon":2.39,"valid":"true"}]"#
        let report = try osmAnd(Self.json + "\r\nUser-Agent: Traccar Client/10.0.3", body: body)
        #expect(report.token == "tok42" && report.app == "Traccar Client" && report.positions.count == 5)
        #expect(report.positions.map(\.location.timestamp) == [1_796_000_000, 1_796_000_001.5, 1_796_104_802, Self.now, Self.now])
        #expect(report.positions.map(\.location.latitude) == [48.85, 48.86, 48.87, 48.88, 48.89])
        #expect(report.positions.map(\.location.accuracy) == [5, 10, 10, .infinity, 10])
        #expect(report.positions.map(\.battery) == [80, 79, nil, nil, nil])
        #expect(report.positions.map(\.alarm) == [nil, nil, "sos", nil, nil])
        #expect(report.positions.map(\.stampedOnReceipt) == [false, false, false, true, true])
        // A whole-number id is a token as its digits; without a Content-Type the body is still read as JSON.
        let numeric = try osmAnd("POST /osmand HTTP/1.1", body: #" [{"id":123456,"lat":1,"lon":2}]"#)
        #expect(numeric.token == "123456" && numeric.app == "Traccar Client (JSON)")
    }

    @Test(arguments: [
        (#"[{"id":"a","lat":1,"lon":2},{"id":"b","lat":1,"lon":2}]"#, "position 2: id names another device than position 1"),
        (#"[{"id":"a","lat":1,"lon":2},{"lat":1,"lon":2}]"#, "position 2: id (the device token) is missing"),
        (#"[{"id":"a","lat":1,"lon":2},{"id":"a","lat":1,"lon":2},{"id":"a","lon":2}]"#, "position 3: lat and lon are missing"),
        (#"[{"id":"a","lat":1,"lon":2},7]"#, "position 2: not a JSON object"),
        (#"[{"id":"a","lat":1,"lon":2,"timestamp":true}]"#, "position 1: timestamp is not a time"),
        (#"[{"id":"a","lat":1,"lon":2,"batt":150}]"#, "position 1: batt is not a percentage 0...100: 150"),
        (#"[{"id":"a","lat":1,"lon":2,"alarm":"s o s"}]"#, "position 1: alarm is not a word"),
        (#"[{"id":"a","lat":1,"lon":2,"alarm":1}]"#, "position 1: alarm is not a word"),
        (#"[{"id":"a","lat":95,"lon":2}]"#, "position 1: lat must be within -90...90"),
        (#"[{"id":"a","lat":1,"lon":2,"batt":true}]"#, "position 1: batt is not a number"),
        (#"[{"id":"a","lat":1,"lon":false}]"#, "position 1: lon is not a number"),
        (#"[{"id":[1],"lat":1,"lon":2}]"#, "position 1: id is not a device token"),
        ("[]", "the batch is empty"),
        (#"{"location":[],"device_id":"t"}"#, "the batch is empty"),
        (#"{"location":{"coords":{"latitude":1,"longitude":2},"battery":{"level":1.5}},"device_id":"t"}"#,
         "location.battery.level is not a fraction 0...1: 1.5"),
        (#"{"location":{"coords":{"latitude":1,"longitude":2},"extras":{"alarm":true}},"device_id":"t"}"#,
         "location.extras.alarm is not a word"),
        (#"{"location":{"coords":{"latitude":1,"longitude":2}}}"#, "device_id is missing"),
        (#"{"device_id":"t"}"#, "location is missing"),
        (#"{"location":[{"coords":{"latitude":1,"longitude":2}},"x"],"device_id":"t"}"#, "position 2: location is not a JSON object"),
        ("[1,", "the body is not a JSON object or array"),
        ("\"text\"", "the body is not a JSON object or array"),
    ])
    func malformedJSONSaysWhichPositionAndWhy(body: String, expected: String) {
        let said = reason { try osmAnd(Self.json, body: body) }
        #expect(said?.hasPrefix(expected) == true, "\(said ?? "-")")
    }

    @Test(arguments: [
        ("GET /osmand?id=a&lat=1&lon=2&batt=full HTTP/1.1", "batt is not a number: full"),
        ("GET /osmand?id=a&lat=1&lon=2&batt=101 HTTP/1.1", "batt is not a percentage 0...100: 101"),
        ("GET /osmand?id=a&lat=1&lon=2&alarm=\(String(repeating: "x", count: 33)) HTTP/1.1", "alarm is not a word"),
        ("GET /osmand?id=a&lat=1&lon=2&alarm=sos%0Apace:bob HTTP/1.1", "alarm is not a word"),
        ("GET /osmand?id=a&lat=1&lon=2&timestamp= HTTP/1.1", "timestamp is neither"),
    ])
    func malformedBatteryAlarmOrTimeSaysWhy(head: String, expected: String) {
        let said = reason { try osmAnd(head) }
        #expect(said?.hasPrefix(expected) == true, "\(said ?? "-")")
    }

    @Test func aBatchHoldsAtMostAThousandPositions() throws {
        func flat(_ count: Int) -> String {
            "[" + Array(repeating: #"{"id":"a","lat":1,"lon":2,"timestamp":1796000000}"#, count: count).joined(separator: ",") + "]"
        }
        #expect(try osmAnd(Self.json, body: flat(DeviceReport.maximumBatch)).positions.count == 1_000)
        #expect(reason { try osmAnd(Self.json, body: flat(1_001)) } == "a batch holds at most 1000 positions; this one has 1001")
        let nested = #"{"location":["# + Array(repeating: #"{"coords":{"latitude":1,"longitude":2}}"#, count: 1_001)
            .joined(separator: ",") + #"],"device_id":"t"}"#
        #expect(reason { try osmAnd(Self.json, body: nested) } == "a batch holds at most 1000 positions; this one has 1001")
        let messages = "[" + Array(repeating: #"{"_type":"location","lat":1,"lon":2}"#, count: 1_001).joined(separator: ",") + "]"
        #expect(reason { try ownTracks("POST /owntracks HTTP/1.1\r\nX-Limit-U: ann\r\nX-Limit-D: t", body: messages) }
                == "a batch holds at most 1000 positions; this one has 1001")
    }

    @Test func ownTracksBatteryAndNoTime() throws {
        let report = try ownTracks("POST /owntracks HTTP/1.1\r\nX-Limit-U: ann\r\nX-Limit-D: tok42\r\nUser-Agent: okhttp/4",
                                   body: #"{"_type":"location","lat":52.5,"lon":13.4,"batt":14}"#)
        #expect(report.positions == [DevicePosition(
            location: LocationCommand(latitude: 52.5, longitude: 13.4, accuracy: 10, timestamp: Self.now, timestampText: "1796108400"),
            stampedOnReceipt: true, battery: 14)])
        #expect(report.app == "OwnTracks" && report.user == "ann" && report.token == "tok42")
        #expect(reason { try ownTracks("POST /owntracks HTTP/1.1\r\nX-Limit-D: t", body: #"{"_type":"location","lat":1,"lon":2,"tst":"x"}"#) }
                == "tst is neither unix seconds nor ISO 8601: x")
        #expect(reason { try ownTracks("POST /owntracks HTTP/1.1\r\nX-Limit-D: t", body: #"{"_type":"location","lat":true,"lon":2}"#) }
                == "lat and lon are missing")
        #expect(reason { try ownTracks("POST /owntracks HTTP/1.1", body: #"{"_type":"location","lat":1,"lon":2}"#) }
                == "no device token: give it as the Basic-auth password")
    }

    @Test func encryptedOwnTracksNamesTheTokenAndUserItCameWith() throws {
        let body = #"{"_type":"encrypted","data":"3q2+7w=="}"#
        let basic = HTTPBasicCredentials(user: "ann", password: "tok42").authorization
        #expect(throws: DeviceReport.Problem.encrypted(token: "tok42", user: "ann")) {
            try ownTracks("POST /owntracks HTTP/1.1\r\nAuthorization: \(basic)", body: body)
        }
        #expect(throws: DeviceReport.Problem.encrypted(token: "tok42", user: "ann")) {
            try ownTracks("POST /owntracks HTTP/1.1\r\nX-Limit-U: ann\r\nX-Limit-D: tok42", body: body)
        }
        #expect(throws: DeviceReport.Problem.encrypted(token: "tok42", user: nil)) {
            try ownTracks("POST /owntracks HTTP/1.1\r\nX-Limit-D: tok42", body: body)
        }
        #expect(throws: DeviceReport.Problem.encrypted(token: nil, user: nil)) {
            try ownTracks("POST /owntracks HTTP/1.1", body: body)
        }
        #expect(throws: DeviceReport.Problem.encrypted(token: "tok42", user: "ann")) {
            try ownTracks("POST /owntracks HTTP/1.1\r\nAuthorization: \(basic)", body: "[\(body),\(body)]")
        }
    }

    @Test func ownTracksArrayKeepsItsLocationsAndIgnoresTheRest() throws {
        let head = "POST /owntracks HTTP/1.1\r\nX-Limit-U: ann\r\nX-Limit-D: tok42"
        let body = #"[{"_type":"transition","event":"enter"},{"_type":"location","lat":1,"lon":2,"tst":1796000000,"acc":4},"#
            + #"{"_type":"waypoint"},{"_type":"location","lat":1.001,"lon":2,"tst":1796000004,"batt":55}]"#
        let report = try ownTracks(head, body: body)
        #expect(report.positions.map(\.location.timestamp) == [1_796_000_000, 1_796_000_004])
        #expect(report.positions.map(\.battery) == [nil, 55] && report.location.accuracy == 4)
        #expect(throws: DeviceReport.Problem.ignored) {
            try ownTracks(head, body: #"[{"_type":"lwt"},{"_type":"card","name":"Ann"}]"#)
        }
        let bad = #"[{"_type":"waypoint"},{"_type":"location","lat":1,"lon":2},{"_type":"location","lon":2}]"#
        #expect(reason { try ownTracks(head, body: bad) } == "position 3: lat and lon are missing")
        #expect(reason { try ownTracks(head, body: "[]") } == "the batch is empty")
        #expect(reason { try ownTracks(head, body: "[1]") } == "position 1: not a JSON object")
    }
}
