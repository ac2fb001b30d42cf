import Foundation
import RunCore

/// Turns XML events of a Garmin Training Center (TCX v2) document into activities.
///
/// Each `<Activity>` is one activity, named by its `<Id>`, with its `Sport` (a `<MultiSportSession>`'s legs,
/// in `<FirstSport>` and `<NextSport>`, are activities like any other). Its laps' trackpoints are
/// its points: a lap boundary continues the track, while a second `<Track>` inside one lap is where the
/// device was paused, so it starts a new segment. Trackpoints without a `<Position>` (heart rate only, or no
/// satellites yet) or without a `<Time>` are skipped and counted. The laps' `<DistanceMeters>` add up to the
/// device's distance, kept beside the engine's own (a `<moonrunner:deviceDistance>` in the activity's
/// `<Extensions>`, which MoonRunner's export writes, takes precedence). Accuracy is `<moonrunner:accuracy>` in a trackpoint's
/// `<Extensions>` when present (MoonRunner's own exports), else ``GPXImport/defaultAccuracy``.
struct TCXReader: XMLEventHandler {
    /// The TCX v2 namespace.
    static let namespace = "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"

    /// Where an `<Activity>` may stand: in `<Activities>`, or as a leg of a `<MultiSportSession>` (a
    /// triathlon's swim, ride and run: each its own activity, and so its own run).
    static let activityParents: Set<String> = ["Activities", "FirstSport", "NextSport"]

    private var activities: [ActivityBuilder] = []
    /// Local names of the open elements; elements of other namespaces are recorded as "".
    private var path: [String] = []
    private var tracksInLap = 0
    private var inPoint = false
    private var pointLine = 0
    private var latitude: Double?
    private var longitude: Double?
    private var time: Double?
    private var accuracy: Double?
    private var altitude: Double?
    private var deviceDistanceOverride: Double?

    mutating func start(_ element: XMLElementStart) throws(StoreError) {
        guard element.namespace == Self.namespace else {
            path.append("")
            return
        }
        let parent = path.last
        path.append(element.name)
        switch (element.name, parent) {
        case ("Activity", let parent?) where Self.activityParents.contains(parent):
            var activity = ActivityBuilder()
            activity.sport = element.attributes["Sport"].flatMap { $0.isEmpty ? nil : String($0.prefix(40)) }
            activities.append(activity)
            deviceDistanceOverride = nil
        case ("Lap", "Activity"):
            tracksInLap = 0
        case ("Track", "Lap"):
            if tracksInLap > 0, !activities.isEmpty { activities[activities.count - 1].breakSegment() }
            tracksInLap += 1
        case ("Trackpoint", "Track") where !activities.isEmpty && isInActivityLap:
            inPoint = true
            pointLine = element.line
            (latitude, longitude, time, accuracy, altitude) = (nil, nil, nil, nil, nil)
        default:
            break
        }
    }

    mutating func end(_ name: String, namespace: String, text: String, line: Int) throws(StoreError) {
        let local = path.popLast()
        let parent = path.last
        if RunExport.extensionNamespaces.contains(namespace), parent == "Extensions", !activities.isEmpty {
            let owner = path.dropLast().last
            if name == "accuracy", owner == "Trackpoint", inPoint {
                accuracy = XMLNumber.value(text).flatMap { $0 >= 0 ? $0 : nil }
            } else if name == "deviceDistance", owner == "Activity" {
                // MoonRunner's own export: its laps are the engine's kilometres, the device's figure is here.
                deviceDistanceOverride = XMLNumber.value(text)
            }
        }
        guard let local, !local.isEmpty, !activities.isEmpty else { return }
        let last = activities.count - 1
        switch (local, parent) {
        case ("Id", "Activity"):
            if !text.isEmpty { activities[last].name = text }
        case ("DistanceMeters", "Lap"):
            guard let metres = XMLNumber.value(text), metres >= 0 else {
                throw StoreError.invalidInput("line \(line): cannot read the lap distance \"\(text)\"")
            }
            activities[last].deviceDistance = (activities[last].deviceDistance ?? 0) + metres
        case ("Time", "Trackpoint") where inPoint:
            guard let parsed = ISO8601.parse(text) else {
                throw StoreError.invalidInput("line \(line): cannot read the time \"\(text)\"")
            }
            time = parsed
        case ("LatitudeDegrees", "Position") where inPoint:
            latitude = XMLNumber.value(text)
        case ("LongitudeDegrees", "Position") where inPoint:
            longitude = XMLNumber.value(text)
        case ("AltitudeMeters", "Trackpoint") where inPoint:
            altitude = XMLNumber.value(text)
        case ("Activity", let parent?) where Self.activityParents.contains(parent):
            if let deviceDistanceOverride { activities[last].deviceDistance = deviceDistanceOverride }
        case ("Trackpoint", "Track") where inPoint:
            activities[last].add(latitude: latitude, longitude: longitude, time: time,
                                 accuracy: accuracy ?? GPXImport.defaultAccuracy, line: pointLine, requiringTimes: true,
                                 altitude: altitude)
            inPoint = false
        default:
            break
        }
    }

    /// True when the open `<Track>` is in an activity's `<Lap>` (not a multisport `<Transition>`'s, nor a
    /// course's): only those points are the activity's.
    private var isInActivityLap: Bool {
        path.count >= 4 && path[path.count - 3] == "Lap" && path[path.count - 4] == "Activity"
    }

    /// The activities with usable points.
    func finish() throws(StoreError) -> [ImportedActivity] {
        try ActivityBuilder.finishAll(activities)
    }
}
