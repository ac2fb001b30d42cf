import Foundation
@testable import RunCore

/// The real recorded runs in the shared folder (`../shared/gpx/real/`), for checks on real paths. The folder
/// is beside the project on the team's machines and CI; where it is not, the checks have nothing to read.
enum RealRuns {
    /// Where the recorded runs are.
    static let directory = "/work/shared/gpx/real"

    /// The Strava runs (1 Hz phone or watch tracks) by file name, in name order; empty without the folder.
    static func stravaRuns() throws -> [(name: String, fixes: [Fix])] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return try names.sorted().filter { $0.hasPrefix("strava-run-") && $0.hasSuffix(".gpx") }.map { name in
            (name, try fixes(ofFile: "\(directory)/\(name)"))
        }
    }

    /// The fixes of a GPX file with their `<ele>` (nil where a point has none), read with a scan for
    /// `<trkpt lat=… lon=…>` and the `<ele>` and `<time>` inside. GPX carries no accuracy; each fix claims 5 m,
    /// typical of a phone in the open.
    static func fixes(ofFile path: String) throws -> [Fix] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let pattern = try NSRegularExpression(
            pattern: #"<trkpt lat="([-0-9.]+)" lon="([-0-9.]+)">\s*(?:<ele>([^<]+)</ele>)?\s*<time>([^<]+)</time>"#)
        let times = ISO8601DateFormatter()
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).compactMap { match in
            func group(_ i: Int) -> String? {
                Range(match.range(at: i), in: text).map { String(text[$0]) }
            }
            guard let lat = group(1).flatMap(Double.init), let lon = group(2).flatMap(Double.init),
                  let date = group(4).flatMap(times.date(from:)) else { return nil }
            return Fix(latitude: lat, longitude: lon, accuracy: 5, timestamp: date.timeIntervalSince1970,
                       altitude: group(3).flatMap(Double.init))
        }
    }
}
