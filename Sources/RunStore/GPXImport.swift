import CSQLite
import Foundation
import RunCore

/// Reads the tracks of GPX 1.0 and 1.1 files (see ``ActivityFile/read(_:)`` for GPX or TCX by content).
///
/// Each `<trk>` is one activity and each non-empty `<trkseg>` one of its segments: a device starts a new
/// segment when the runner pauses it. Points without a valid `lat`/`lon` (a watch still looking for
/// satellites) and points without a `<time>` are skipped and counted. Only a track point's own `<time>`,
/// `<hdop>` and, inside its `<extensions>`, `<moonrunner:accuracy>` are read (and a track's
/// `<moonrunner:deviceDistance>`); other vendors' extensions are ignored. Accuracy is the MoonRunner extension's metres, else hdop × 5 metres, else 5 m. Times without a
/// zone are taken as UTC.
public enum GPXImport {
    /// Metres of accuracy per unit of hdop.
    public static let metresPerHDOP = 5.0
    /// Accuracy given to points without hdop, in metres.
    public static let defaultAccuracy = 5.0

    /// The tracks of a GPX document, each track's segments joined. Errors (kind
    /// ``StoreError/Kind/invalidInput``) name the line. With `requiringTimes` false, a point without a time
    /// gets a NaN timestamp instead (a route to replay at a chosen pace, not a recorded run).
    public static func tracks(from data: Data, requiringTimes: Bool = true) throws(StoreError) -> [[Fix]] {
        try activities(from: data, requiringTimes: requiringTimes).map(\.fixes)
    }

    /// The tracks of a GPX document as activities, with their segments.
    public static func activities(from data: Data, requiringTimes: Bool = true) throws(StoreError) -> [ImportedActivity] {
        var reader = GPXReader(requiringTimes: requiringTimes)
        try XMLEvents.parse(data, into: &reader)
        return try reader.finish()
    }
}

/// Turns XML events of a GPX document into activities.
struct GPXReader: XMLEventHandler {
    /// The GPX 1.1 namespace (the one the exports write).
    static let namespace11 = "http://www.topografix.com/GPX/1/1"

    /// GPX elements are in the 1.0 or 1.1 namespace, or (in careless files) in none.
    static func isGPXNamespace(_ namespace: String) -> Bool {
        namespace.isEmpty || namespace == namespace11 || namespace == "http://www.topografix.com/GPX/1/0"
    }

    let requiringTimes: Bool
    private var sawGPX = false
    private var tracks: [ActivityBuilder] = []
    /// Local names of the open elements; elements of other namespaces are recorded as "" so that a
    /// vendor's `<x:time>` inside a point never reads as the point's time.
    private var path: [String] = []
    private var point: (latitude: Double?, longitude: Double?, line: Int)?
    private var time: Double?
    private var hdop: Double?
    private var accuracy: Double?
    private var elevation: Double?

    init(requiringTimes: Bool) {
        self.requiringTimes = requiringTimes
    }

    /// Puts `element` on the stack of open elements (another namespace's as "", so a vendor's `<x:time>` never
    /// reads as GPX's); nil for such a foreign element, else the GPX element's parent (nil at the root).
    static func enter(_ element: XMLElementStart, path: inout [String]) -> String?? {
        guard isGPXNamespace(element.namespace) else {
            path.append("")
            return nil
        }
        defer { path.append(element.name) }
        return .some(path.last)
    }

    mutating func start(_ element: XMLElementStart) throws(StoreError) {
        guard let parent = Self.enter(element, path: &path) else { return }
        switch element.name {
        // Only gpx/trk/trkseg/trkpt counts: a <trk> inside something else (a waypoint, an extension) is no track.
        case "gpx" where parent == nil: sawGPX = true
        case "trk" where parent == "gpx" && path.count == 2: tracks.append(ActivityBuilder())
        case "trkseg" where parent == "trk" && path.count == 3 && !tracks.isEmpty: tracks[tracks.count - 1].breakSegment()
        case "trkpt" where parent == "trkseg" && path.count == 4 && !tracks.isEmpty:
            // xsd:decimal: no exponent.
            point = (element.attributes["lat"].flatMap { XMLNumber.value($0, exponent: false) },
                     element.attributes["lon"].flatMap { XMLNumber.value($0, exponent: false) }, element.line)
            time = nil
            hdop = nil
            accuracy = nil
            elevation = nil
        default: break
        }
    }

    mutating func end(_ name: String, namespace: String, text: String, line: Int) throws(StoreError) {
        let local = path.popLast()
        let parent = path.last
        if RunExport.extensionNamespaces.contains(namespace), parent == "extensions" {
            let owner = path.dropLast().last
            if name == "accuracy", owner == "trkpt", point != nil {
                accuracy = XMLNumber.value(text).flatMap { $0 >= 0 ? $0 : nil }
            } else if name == "deviceDistance", owner == "trk", path.count == 3, !tracks.isEmpty {
                tracks[tracks.count - 1].deviceDistance = XMLNumber.value(text)
            }
        }
        guard let local, !local.isEmpty else { return }
        if parent == "trkpt", point != nil {
            if local == "time" {
                guard let parsed = ISO8601.parse(text) else {
                    throw StoreError.invalidInput("line \(line): cannot read the time \"\(text)\"")
                }
                time = parsed
            } else if local == "hdop" {
                hdop = XMLNumber.value(text, exponent: false)
            } else if local == "ele" {
                elevation = XMLNumber.value(text, exponent: false)
            }
        } else if local == "name", parent == "trk", path.count == 2, !tracks.isEmpty, !text.isEmpty {
            tracks[tracks.count - 1].name = text
        } else if local == "trkpt", let point, !tracks.isEmpty {
            let accuracy = accuracy ?? hdop.map { $0 * GPXImport.metresPerHDOP } ?? GPXImport.defaultAccuracy
            tracks[tracks.count - 1].add(latitude: point.latitude, longitude: point.longitude, time: time,
                                         accuracy: accuracy, line: point.line, requiringTimes: requiringTimes,
                                         altitude: elevation)
            self.point = nil
        }
    }

    /// The activities with usable points.
    func finish() throws(StoreError) -> [ImportedActivity] {
        guard sawGPX else { throw StoreError.invalidInput("not a GPX document (no <gpx> element)") }
        return try ActivityBuilder.finishAll(tracks)
    }
}

extension StoreError {
    /// An error about an input file.
    public static func invalidInput(_ message: String) -> StoreError {
        StoreError(.invalidInput, message)
    }
}
