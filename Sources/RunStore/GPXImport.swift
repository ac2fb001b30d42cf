import CSQLite
import Foundation
import RunCore

/// Reads the track points of GPX 1.0 and 1.1 files with a small XML scanner (no libxml2 needed).
///
/// Each `<trk>` becomes one list of fixes (its segments joined; empty segments and empty tracks are skipped).
/// Only a track point's own `<time>` and `<hdop>` children are read, so extension elements with the same local
/// names are ignored. Namespace prefixes are ignored; a UTF-8 byte-order mark is skipped. Accuracy is hdop × 5
/// metres, or 5 m when a point has no hdop. Times without a zone are taken as UTC.
public enum GPXImport {
    /// Metres of accuracy per unit of hdop.
    public static let metresPerHDOP = 5.0
    /// Accuracy given to points without hdop, in metres.
    public static let defaultAccuracy = 5.0

    /// The tracks in a GPX document. Errors (code ``StoreError/invalidInputCode``) name the line: malformed XML,
    /// a point without valid lat/lon, a point without a time. With `requiringTimes` false, a point without a
    /// time gets a NaN timestamp instead (a route to replay at a chosen pace, not a recorded run).
    public static func tracks(from data: Data, requiringTimes: Bool = true) throws(StoreError) -> [[Fix]] {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            throw StoreError.invalidInput("the GPX file is UTF-16; only UTF-8 is supported")
        }
        var builder = TrackBuilder(requiringTimes: requiringTimes)
        var scanner = XMLScanner(bytes: bytes)
        while let event = try scanner.next() { try builder.handle(event, line: scanner.line) }
        guard builder.sawGPX else { throw StoreError.invalidInput("not a GPX document (no <gpx> element)") }
        return builder.tracks.filter { !$0.isEmpty }
    }

    /// Turns scanner events into tracks.
    private struct TrackBuilder {
        let requiringTimes: Bool
        var tracks: [[Fix]] = []

        init(requiringTimes: Bool) {
            self.requiringTimes = requiringTimes
        }

        var sawGPX = false
        private var path: [String] = []
        private var point: (latitude: Double, longitude: Double, line: Int)?
        private var time: Double?
        private var hdop: Double?
        private var text = ""

        mutating func handle(_ event: XMLScanner.Event, line: Int) throws(StoreError) {
            switch event {
            case .start(let name, let attributes):
                let local = XMLScanner.localName(name)
                let parent = path.last
                path.append(local)
                text = ""
                switch local {
                case "gpx" where parent == nil: sawGPX = true
                case "trk": tracks.append([])
                case "trkpt" where parent == "trkseg":
                    guard let latitude = attributes["lat"].flatMap(Double.init), latitude.isFinite,
                          let longitude = attributes["lon"].flatMap(Double.init), longitude.isFinite else {
                        throw StoreError.invalidInput("line \(line): track point without a valid lat and lon")
                    }
                    point = (latitude, longitude, line)
                    time = nil
                    hdop = nil
                default: break
                }
            case .text(let content):
                text += content
            case .end:
                let local = path.popLast()
                let parent = path.last
                if parent == "trkpt", point != nil {
                    let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    if local == "time" {
                        guard let parsed = ISO8601.parse(value) else {
                            throw StoreError.invalidInput("line \(line): cannot read the time \"\(value)\"")
                        }
                        time = parsed
                    } else if local == "hdop" {
                        hdop = Double(value)
                    }
                } else if local == "trkpt", let point {
                    guard let time = time ?? (requiringTimes ? nil : .nan) else {
                        throw StoreError.invalidInput("line \(point.line): track point without a <time>; "
                            + "a run needs the time of every point")
                    }
                    let accuracy = hdop.map { $0 * GPXImport.metresPerHDOP } ?? GPXImport.defaultAccuracy
                    if tracks.isEmpty { tracks.append([]) }
                    tracks[tracks.count - 1].append(Fix(latitude: point.latitude, longitude: point.longitude,
                                                        accuracy: accuracy, timestamp: time))
                    self.point = nil
                }
                text = ""
            }
        }
    }
}

extension StoreError {
    /// The code of errors in input files rather than in SQLite (`SQLITE_FORMAT`, which SQLite itself no
    /// longer uses).
    public static let invalidInputCode: Int32 = SQLITE_FORMAT

    /// An error about an input file.
    static func invalidInput(_ message: String) -> StoreError {
        StoreError(code: invalidInputCode, message: message)
    }
}

/// ISO 8601 date-times as GPX writes them.
enum ISO8601 {
    /// `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM|±HHMM]` (a space for `T` is accepted; no zone means UTC).
    static func parse(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + digits)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2) else { return nil }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (48...57).contains(bytes[index]) {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if index < bytes.count {
            if expect("Zz") {
            } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
                guard let hours = number(2) else { return nil }
                _ = expect(":")
                let minutes = number(2) ?? 0
                offset = sign * (hours * 3600 + minutes * 60)
            } else {
                return nil
            }
        }
        guard index == bytes.count, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
              second <= 60 else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Double(timegm(&parts)) + fraction - Double(offset)
    }
}
