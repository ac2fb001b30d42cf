import Foundation
import RunCore
import RunStore
import Testing
import Wire

/// What the phone-app tests share, over sockets or on the pure server: a real recorded run, positions from
/// it as a phone queues them, and the requests the apps send.
package enum PhoneFixtures {
    /// A real recorded run (Strava export), as recorded.
    package static let track: [Fix] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("RunStoreTests/Fixtures/strava-run-1.gpx")
        let track = (try? GPXImport.tracks(from: Data(contentsOf: file)))?.first ?? []
        return track.map { Fix(latitude: $0.latitude, longitude: $0.longitude, accuracy: 5, timestamp: $0.timestamp,
                               altitude: $0.altitude) }
    }()

    /// The recorded run with its times moved to start now, as a phone would record it. Moved at each call: moved
    /// once, when a test first read it, a test that ran half a minute later (a slowed, sanitized suite) sent a
    /// first fix too old to start a run, and the fixes before the run started were not stored.
    package static var recorded: [Fix] {
        let shift = Date().timeIntervalSince1970.rounded(.down) - (track.first?.timestamp ?? 0)
        return track.map { Fix(latitude: $0.latitude, longitude: $0.longitude, accuracy: 5, timestamp: $0.timestamp + shift,
                               altitude: $0.altitude) }
    }

    /// The recorded run's positions every `step` seconds, `count` of them, the last taken `endingAgo` seconds ago.
    package static func queue(count: Int, step: Int = 4, endingAgo: Double = 0) -> [Fix] {
        let track = Self.track
        let picked = stride(from: 0, to: min(count * step, track.count), by: step).map { track[$0] }
        let end = Date().timeIntervalSince1970.rounded(.down) - endingAgo
        let shift = end - (picked.last?.timestamp ?? 0)
        return picked.map { Fix(latitude: $0.latitude, longitude: $0.longitude, accuracy: 5, timestamp: $0.timestamp + shift) }
    }

    /// An OsmAnd request's path for one position.
    package static func osmAnd(_ fix: Fix, token: String) -> String {
        "/osmand?id=\(token)&timestamp=\(Int64(fix.timestamp))&lat=\(fix.latitude)&lon=\(fix.longitude)&accuracy=5"
    }

    /// `device:` on the runner's connection: the token.
    package static func deviceToken(_ runner: some LineClient) throws -> String {
        try runner.send("device:")
        return try #require(try OkEvent(event: Event.parse(runner.expect("ok:device")))["token"])
    }

    /// A JSON POST an app sends (Traccar Client 9's form by default).
    package static func json(_ body: String, to path: String = "/osmand", headers: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }
}
