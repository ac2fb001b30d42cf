import RunCore
import Wire

// Swift-shaped names and types over the wire events the API hands out. The events themselves stay Wire's
// (the server formats the same values), so these are aliases and typed views rather than copies.

/// One saved run in a page of `runs(of:)` — the wire's `item:` line.
public typealias RunListItem = RunListItemEvent
/// A run's totals in `run(id:)` — the wire's `summary:` line.
public typealias RunSummary = RunSummaryEvent
/// The stretch between two consecutive badges of a run — the wire's `checkpoint:` line.
public typealias RunCheckpoint = CheckpointEvent
/// One badge of a runner's board in `badges(of:)` — the wire's `board:` line.
public typealias BadgeBoardEntry = BoardEvent

extension BadgeEvent {
    /// The tier as an enum: `.earned`, `.silver`, `.gold` or `.best`. Never nil for an event the server
    /// sent (the parser refuses other words); nil only for a hand-made event with another `tier` text.
    public var badgeTier: BadgeTier? { BadgeTier(rawValue: tier) }
}

extension SplitEvent {
    /// The unit as an enum: `.kilometre` or `.mile`. Never nil for an event the server sent; nil only for a
    /// hand-made event with another `unit` text.
    public var splitUnit: SplitUnit? { SplitUnit(rawValue: unit) }
}

extension RunSummaryEvent {
    /// Where a stored run is in its life.
    public enum Status: String, Sendable, Hashable, CaseIterable {
        /// Still running: the values are the ones so far.
        case live
        /// Ended with `stop:` (or by the server) and kept.
        case saved
        /// Ended with `stop:discard`: only from older servers (a discarded run is no longer in history).
        case discarded
        /// Ended by the server when the runner did not come back within the resume window.
        case endedByTimeout = "ended_by_timeout"
    }

    /// The status as an enum; nil for a word this build does not know (the protocol lets the server add
    /// statuses, which is why `status` keeps the text, to show as is).
    public var runStatus: Status? { Status(rawValue: status) }
}

/// `ok:msg count=1` rather than the struct's fields: an `ok:` is mostly printed for people.
extension OkEvent: CustomStringConvertible {
    /// The line as the server sent it, e.g. `ok:msg count=1`.
    public var description: String { line }
}

extension AlertEvent {
    /// What an alert is about.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A checkpoint passed (`coach:NAME every=M`).
        case checkpoint
        /// The current pace off the goal's target pace for a while.
        case offPace = "off_pace"
        /// Back within the goal's margin.
        case backOnPace = "back_on_pace"
        /// The runner's phone raised an SOS.
        case sos
        /// The phone's battery level moved (by 5 points, or its first report of the run).
        case battery
        /// The phone's battery fell below 15 %.
        case batteryLow = "battery_low"
        /// The runner has been more than 50 m from its course for 30 s, less the farther off (`off` the metres off).
        case offCourse = "off_course"
        /// Back on the course.
        case backOnCourse = "back_on_course"
    }

    /// The kind as an enum; nil for a word this build does not know (`alert` keeps the text).
    public var alertKind: Kind? { Kind(rawValue: alert) }

    /// What a runner's phone says, typed: nil for the race alerts (checkpoints, pace).
    public var phoneAlert: PhoneAlert? {
        switch alertKind {
        case .sos:
            return .sos(runner: runner, latitude: latitude, longitude: longitude,
                        time: timestamp.flatMap { Double($0) } ?? 0)
        case .battery: return battery.map { .battery(runner: runner, level: $0) }
        case .batteryLow: return battery.map { .batteryLow(runner: runner, level: $0) }
        default: return nil
        }
    }
}

/// An alert a runner's phone raised (``AlertEvent/phoneAlert``).
public enum PhoneAlert: Sendable, Hashable {
    /// An SOS: where (nil when the runner's privacy zone withholds it from this follower) and when (unix seconds,
    /// the time of the position that carried it).
    case sos(runner: String, latitude: Double?, longitude: Double?, time: Double)
    /// The battery level in percent.
    case battery(runner: String, level: Double)
    /// The battery fell below 15 % (raised once, again only after it was back at 20 %).
    case batteryLow(runner: String, level: Double)

    /// OpenStreetMap at a position: `https://www.openstreetmap.org/?mlat=LAT&mlon=LON#map=17/LAT/LON`.
    public static func mapLink(latitude: Double, longitude: Double) -> String {
        let lat = NumberFormat.string(latitude, decimals: 5), lon = NumberFormat.string(longitude, decimals: 5)
        return "https://www.openstreetmap.org/?mlat=\(lat)&mlon=\(lon)#map=17/\(lat)/\(lon)"
    }
}
