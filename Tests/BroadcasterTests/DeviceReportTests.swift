@testable import Broadcaster
import HTTP
import MoonRunnerTestSupport
import Testing
import Wire

/// Every app's request shape read into a fix, without sockets.
@Suite(.mayBlock) struct DeviceReportTests {
    func request(_ head: String, body: String = "") throws -> HTTPRequest {
        var parser = HTTPRequestParser()
        let bodyPart = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
        parser.append(Array((head + "\r\nHost: t\r\n" + bodyPart + "\r\n" + body).utf8))
        return try #require(try parser.nextRequest())
    }

    @Test func osmAndQueryFormAsTraccarAndOsmAndSendIt() throws {
        let get = try DeviceReport.osmAnd(request(
            "GET /osmand?id=abc123&timestamp=1796000000&lat=48.8566&lon=2.3522&speed=3.1&bearing=90&altitude=35&accuracy=6&batt=87 HTTP/1.1"))
        #expect(get.token == "abc123")
        #expect(get.location == LocationCommand(latitude: 48.8566, longitude: 2.3522, accuracy: 6, timestamp: 1_796_000_000,
                                                timestampText: "1796000000"))
        let post = try DeviceReport.osmAnd(request("POST /osmand?deviceid=abc123&timestamp=1796000000123&lat=1&lon=2&hdop=2 HTTP/1.1"))
        #expect(post.location.timestamp == 1_796_000_000.123 && post.location.accuracy == 10)
        let form = try DeviceReport.osmAnd(request("POST /osmand HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded",
                                                   body: "id=abc123&location=48.1%2C11.5&timestamp=2026-12-01T08%3A00%3A00Z"))
        #expect(form.location.latitude == 48.1 && form.location.longitude == 11.5 && form.location.timestamp == 1_796_112_000)
        let invalid = try DeviceReport.osmAnd(request("GET /osmand?id=a&timestamp=1796000000&lat=1&lon=2&valid=false HTTP/1.1"))
        #expect(invalid.location.accuracy == .infinity, "the filter refuses it as inaccurate")
        #expect(DeviceReport.defaultAccuracy == 10)
    }

    @Test func traccarClient9JSON() throws {
        let body = #"{"location":{"timestamp":"2026-12-01T08:00:00.500+01:00","coords":{"latitude":48.85,"longitude":2.35,"#
            + #""accuracy":4.5,"speed":3,"heading":10,"altitude":30},"is_moving":true,"odometer":12,"battery":{"level":0.8,"#
            + #""is_charging":false},"activity":{"type":"running"}},"device_id":"tok42"}"#
        let report = try DeviceReport.osmAnd(request("POST /osmand HTTP/1.1\r\nContent-Type: application/json", body: body))
        #expect(report.token == "tok42" && report.location.accuracy == 4.5)
        #expect(report.location.timestamp == 1_796_112_000 - 3600 + 0.5)
        #expect(report.location.timestampText == "1796108400.5")
    }

    @Test func ownTracksRefusesAStampPastAnyClock() throws {
        let body = #"{"_type":"location","lat":1,"lon":1,"tst":1e30}"#
        #expect(throws: DeviceReport.Problem.self) {
            try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1\r\nX-Limit-U: a\r\nX-Limit-D: b", body: body))
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
        let withAuth = try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1\r\nAuthorization: \(basic)", body: body))
        #expect(withAuth.token == "tok42" && withAuth.user == "ann" && withAuth.location.accuracy == 8)
        let withHeaders = try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1\r\nX-Limit-U: ann\r\nX-Limit-D: tok42",
                                                             body: body))
        #expect(withHeaders == withAuth)
        #expect(throws: DeviceReport.Problem.ignored) {
            try DeviceReport.ownTracks(request("POST /owntracks HTTP/1.1", body: #"{"_type":"waypoint","lat":1}"#))
        }
    }

    @Test(arguments: [
        ("GET /osmand?timestamp=1&lat=1&lon=2 HTTP/1.1", "id"),
        ("GET /osmand?id=a&lat=1&lon=2 HTTP/1.1", "timestamp"),
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
            _ = try DeviceReport.osmAnd(parsed)
            Issue.record("\(head) was accepted")
        } catch {
            guard case .malformed(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains(word), "\(reason)")
        }
    }
}
