import Foundation
import RunCore
import Wire

/// The file formats runs are imported from and exported to.
public enum ActivityFormat: String, Sendable, Hashable, CaseIterable {
    /// GPX 1.0 or 1.1 (topografix).
    case gpx
    /// Garmin Training Center XML v2.
    case tcx
}

/// One recorded activity read from a file, before the engine has seen it: the points in segments (a new
/// segment where the device was paused), what was skipped and what the device itself measured.
public struct ImportedActivity: Sendable, Hashable {
    /// The activity's name or id as the file gives it, if any.
    public var name: String?
    /// The sport the file gives it (TCX `Sport`: Running, Biking, Other), if any.
    public var sport: String?
    /// The usable points (a position and a time), in segments; no segment is empty.
    public var segments: [[Fix]]
    /// Points skipped because they had no valid position (a watch still looking for satellites).
    public var pointsWithoutPosition = 0
    /// Points skipped because they had no time.
    public var pointsWithoutTime = 0
    /// The distance the device recorded, metres (TCX `DistanceMeters` of the laps); nil when the file has none.
    public var deviceDistance: Double?

    /// Creates an activity.
    public init(name: String? = nil, sport: String? = nil, segments: [[Fix]], pointsWithoutPosition: Int = 0,
                pointsWithoutTime: Int = 0, deviceDistance: Double? = nil) {
        self.name = name
        self.sport = sport
        self.segments = segments.filter { !$0.isEmpty }
        self.pointsWithoutPosition = pointsWithoutPosition
        self.pointsWithoutTime = pointsWithoutTime
        self.deviceDistance = deviceDistance
    }

    /// Every usable point in order, segments joined.
    public var fixes: [Fix] { segments.flatMap { $0 } }

    /// The number of usable points.
    public var pointCount: Int { segments.reduce(0) { $0 + $1.count } }

    /// Points skipped for any reason.
    public var skippedPoints: Int { pointsWithoutPosition + pointsWithoutTime }

    /// The time of the first usable point (with the point count and the runner, what identifies a repeated
    /// import of the same activity).
    public var firstPointTime: Double? { segments.first?.first?.timestamp }
}

/// A GPX or TCX file's activities.
public struct ActivityFile: Sendable {
    /// The format, found from the content (the root element), not the file name.
    public var format: ActivityFormat
    /// The activities with at least one usable point, in file order.
    public var activities: [ImportedActivity]

    /// Reads a GPX or TCX document. Errors (kind ``StoreError/Kind/invalidInput``) name the line: malformed
    /// XML, a document that is neither GPX nor TCX, an unreadable time, a track whose points have no times.
    public static func read(_ data: Data) throws(StoreError) -> ActivityFile {
        guard data.contains(where: { !Self.isSpace($0) }) else { throw StoreError.invalidInput("the file is empty") }
        var reader = ActivityFileReader()
        try XMLEvents.parse(data, into: &reader)
        switch reader.content {
        case .gpx(let builder): return ActivityFile(format: .gpx, activities: try builder.finish())
        case .tcx(let builder): return ActivityFile(format: .tcx, activities: try builder.finish())
        case nil: throw StoreError.invalidInput("not a GPX or TCX document (no root element)")
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// Picks the reader from the root element and hands it the rest of the document.
private struct ActivityFileReader: XMLEventHandler {
    enum Content {
        case gpx(GPXReader)
        case tcx(TCXReader)
    }

    // Two optionals rather than one enum, so the readers are mutated in place (an enum payload would be
    // copied out and back on every event, and its arrays with it).
    private var gpx: GPXReader?
    private var tcx: TCXReader?

    var content: Content? {
        if let gpx { return .gpx(gpx) }
        return tcx.map { .tcx($0) }
    }

    mutating func start(_ element: XMLElementStart) throws(StoreError) {
        if gpx != nil {
            try gpx!.start(element)
        } else if tcx != nil {
            try tcx!.start(element)
        } else if element.name == "gpx", GPXReader.isGPXNamespace(element.namespace) {
            gpx = GPXReader(requiringTimes: true)
            try gpx!.start(element)
        } else if element.name == "TrainingCenterDatabase", element.namespace == TCXReader.namespace {
            tcx = TCXReader()
            try tcx!.start(element)
        } else {
            throw StoreError.invalidInput("line \(element.line): not a GPX or TCX document (the root element is "
                + "<\(element.name)>\(element.namespace.isEmpty ? "" : " in \(element.namespace)"))")
        }
    }

    mutating func end(_ name: String, namespace: String, text: String, line: Int) throws(StoreError) {
        if gpx != nil {
            try gpx!.end(name, namespace: namespace, text: text, line: line)
        } else if tcx != nil {
            try tcx!.end(name, namespace: namespace, text: text, line: line)
        }
    }
}

/// Collects one activity's points while a reader walks it.
struct ActivityBuilder {
    var name: String?
    var sport: String?
    var segments: [[Fix]] = [[]]
    var withoutPosition = 0
    var withoutTime = 0
    /// The line of the first point without a time (an error when no point has one).
    var firstTimelessLine: Int?
    var deviceDistance: Double?

    /// Starts a new segment unless the current one is still empty.
    mutating func breakSegment() {
        if !(segments.last?.isEmpty ?? true) { segments.append([]) }
    }

    /// Adds a point, or counts it as skipped when it lacks a position or (with `requiringTimes`) a time.
    mutating func add(latitude: Double?, longitude: Double?, time: Double?, accuracy: Double, line: Int,
                      requiringTimes: Bool, altitude: Double? = nil) {
        guard let latitude, let longitude, latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude),
              (-180...180).contains(longitude) else {
            withoutPosition += 1
            return
        }
        guard let time = time ?? (requiringTimes ? nil : .nan) else {
            withoutTime += 1
            if firstTimelessLine == nil { firstTimelessLine = line }
            return
        }
        // An implausible altitude (non-finite, or beyond ±20 km) is no altitude: the point still counts for its
        // position.
        segments[segments.count - 1].append(Fix(latitude: latitude, longitude: longitude, accuracy: accuracy,
                                                timestamp: time, altitude: altitude.flatMap { Fix.plausibleAltitudes.contains($0) ? $0 : nil }))
    }

    /// The most characters of an activity's name that are kept.
    static let longestName = 200

    /// The activity, or nil when it has no usable point; fails when points had positions but none a time.
    func finish() throws(StoreError) -> ImportedActivity? {
        // A name is a title, not a document: a file's 50 MB <name> is cut to what a list can show.
        let title = name.map { String($0.prefix(Self.longestName)) }
        let activity = ImportedActivity(name: title, sport: sport, segments: segments, pointsWithoutPosition: withoutPosition,
                                        pointsWithoutTime: withoutTime, deviceDistance: deviceDistance)
        if activity.pointCount == 0, let line = firstTimelessLine {
            throw StoreError.invalidInput("line \(line): track point without a <time>; a run needs the time of "
                + "its points")
        }
        return activity.pointCount == 0 ? nil : activity
    }

    /// A file's usable activities. One whose points all lack a time is left out (a file may hold a planned
    /// route beside the recorded runs) and its points are counted as skipped with the last usable one; only
    /// when no activity is usable does it fail the file (a run needs the time of its points).
    static func finishAll(_ builders: [ActivityBuilder]) throws(StoreError) -> [ImportedActivity] {
        var activities: [ImportedActivity] = []
        var timeless: StoreError?
        var skipped = (position: 0, time: 0)
        for builder in builders {
            do throws(StoreError) {
                if let activity = try builder.finish() { activities.append(activity) }
            } catch {
                timeless = timeless ?? error
                skipped.position += builder.withoutPosition
                skipped.time += builder.withoutTime
            }
        }
        if activities.isEmpty, let timeless { throw timeless }
        if !activities.isEmpty {
            activities[activities.count - 1].pointsWithoutPosition += skipped.position
            activities[activities.count - 1].pointsWithoutTime += skipped.time
        }
        return activities
    }
}

/// ISO 8601 date-times as GPX and TCX write them.
enum ISO8601 {
    /// `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM|±HHMM]` (a space for `T` is accepted; no zone means UTC).
    static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { bytes in parse(bytes) }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
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
        func expect(_ characters: StaticString) -> Bool {
            guard index < bytes.count else { return false }
            let found = characters.withUTF8Buffer { $0.contains(bytes[index]) }
            if found { index += 1 }
            return found
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
                // Zones run from -12:00 to +14:00; +25:99 is no zone.
                guard hours <= 14, minutes < 60 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            } else {
                return nil
            }
        }
        guard index == bytes.count, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second <= 60 else { return nil }
        return Double(Int(CivilCalendar.days(fromYear: Int64(year), Int64(month), Int64(day))) * 86_400 + hour * 3600 + minute * 60 + second)
            + fraction - Double(offset)
    }

    /// Days in a month of the proleptic Gregorian calendar (February 30 is no date).
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// Numbers as GPX and TCX write them (XML Schema's decimal and double): spaces around allowed, a decimal
/// point, a sign, and an exponent where the schema's type has one; never hex, `inf` or `nan`, which
/// `Double(String)` would also take.
enum XMLNumber {
    /// The finite value of `text`, or nil.
    static func value(_ text: String, exponent: Bool = true) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let allowed = trimmed.utf8.allSatisfy { byte in
            (48...57).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "+") || exponent && (byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E"))
        }
        guard allowed, let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }
}
