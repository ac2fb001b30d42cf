/// Whom a `watch:`, `coach:` or `unwatch:` is about.
public enum WatchTarget: Sendable, Hashable {
    /// One runner by name.
    case runner(String)
    /// Every runner, present and future (`*`).
    case everyone

    /// The target as written on the wire: the name or `*`.
    public var text: String {
        switch self {
        case .runner(let name): return name
        case .everyone: return "*"
        }
    }
}

/// One GPS fix as sent by a runner: `loc:LAT,LON,ACC,TS`.
public struct LocationCommand: Sendable, Hashable {
    /// Degrees north, -90...90.
    public var latitude: Double
    /// Degrees east, -180...180.
    public var longitude: Double
    /// Horizontal accuracy in metres (not range-checked here: the engine filters bad values).
    public var accuracy: Double
    /// Unix time in seconds.
    public var timestamp: Double
    /// The timestamp exactly as the runner wrote it, echoed back in `ts=` fields.
    public var timestampText: String
    /// Altitude in metres, from a phone app's position (`loc:` has no field for it); nil when none.
    public var altitude: Double?

    /// Creates a fix; the timestamp text defaults to the shortest plain decimal of `timestamp`.
    public init(latitude: Double, longitude: Double, accuracy: Double, timestamp: Double, timestampText: String? = nil,
                altitude: Double? = nil) {
        self.altitude = altitude
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.timestamp = timestamp
        self.timestampText = timestampText ?? NumberFormat.plain(timestamp)
    }
}

/// A client-to-server line: `word:args`.
public enum Command: Sendable, Hashable {
    /// `iam:NAME` or `iam:NAME KEY`: become (or resume as) runner NAME.
    case identify(name: String, key: String?)
    /// `loc:LAT,LON,ACC,TS`: one GPS fix.
    case location(LocationCommand)
    /// `stop:` (save the run) or `stop:discard`.
    case stop(save: Bool)
    /// `watch:NAME` / `watch:*`: receive every event of the runner(s); `watch:NAME TOKEN` with a private
    /// runner's share token.
    case watch(WatchTarget, token: String? = nil)
    /// `coach:NAME` / `coach:*` (optionally `every=METRES`): receive only run, badge, end and alert events,
    /// and with `every` an `alert: kind=checkpoint` at every multiple of that distance.
    case coach(WatchTarget, token: String? = nil, every: Double? = nil)
    /// `unwatch:NAME` / `unwatch:*`: stop watching or coaching.
    case unwatch(WatchTarget)
    /// `msg:TEXT`: a cheer.
    case cheer(String)
    /// `ping:` → `ok:ping`.
    case ping
    /// `help:` → help lines.
    case help
    /// `quit:` → close the connection.
    case quit
    /// `stats:` → server counters.
    case stats
    /// `runs:NAME [OFFSET [LIMIT]]`: a page of a runner's runs, newest first.
    case listRuns(name: String, offset: Int, limit: Int)
    /// `run:ID`: one run in detail.
    case showRun(id: Int64)
    /// `badges:NAME`: a runner's badge board.
    case showBadges(name: String)
    /// `device:` / `device:LABEL`: a token for a phone app that posts positions over HTTP (OsmAnd, Traccar,
    /// OwnTracks), with the label the runner knows the phone by (up to 40 characters).
    case addDevice(label: String?)
    /// `device:list`: the runner's phones (`device:` lines, then `done:device`).
    case listDevices
    /// `undevice:TOKEN` / `undevice:ID` / `undevice:*`: revoke one device token (by the token, or by the id
    /// `device:list` shows) or all of the runner's.
    case removeDevice(token: String?)
    /// `goal:DISTANCE_M [TARGET_S [MARGIN_PCT]]` sets the run's goal; `goal:off` (nil) clears it.
    case goal(GoalCommand?)
    /// `leaders:` / `leaders:GOAL_M`: the live runners ranked by distance (those with that goal distance).
    case leaders(goal: Double?)
    /// `private:on` / `private:off`: the runner's runs seen only by itself and its share links, or by all.
    case setPrivate(Bool)
    /// `privacy:METRES`: the first and last METRES (0–1000) of every run hidden from everyone but the runner.
    case privacyZone(Double)
    /// `share:` / `share:SECONDS`: a share link's token for the runner's runs (default 24 h, at most 7 days).
    case share(seconds: Double?)
    /// `unshare:TOKEN` / `unshare:*`: revoke one share token or all of the runner's.
    case unshare(token: String?)
    /// `replay:RUN_ID [SPEED]`: a saved run's events again, as if live, SPEED (1–100, default 1) times faster;
    /// `replay:off` (nil) stops it.
    case replay(runID: Int64?, speed: Double)
    /// `leaders:course=NAME`: the live runners following course NAME, ranked by how far along it they are.
    case courseLeaders(String)
    /// `course:NAME` follows a race course (stored with `moonrunner course add`); `course:off` (nil) stops.
    case course(name: String?)

    /// Every command word, in the order protocol.md lists them.
    public static let words: [String] = [
        "iam", "loc", "stop", "watch", "coach", "unwatch", "msg", "ping", "help", "quit", "stats", "runs", "run", "badges",
        "device", "undevice", "goal", "leaders", "private", "privacy", "share", "unshare", "replay", "course",
    ]

    /// Limits of the grammar, shared by parser, server and documentation.
    public enum Limits {
        /// Longest line in bytes, without the line ending.
        public static let lineLength = 4096
        /// Longest runner name in bytes.
        public static let nameLength = 32
        /// Longest key in characters.
        public static let keyLength = 64
        /// Longest cheer in Unicode scalars.
        public static let cheerLength = 280
        /// Longest device label (`device:LABEL`) in Unicode scalars.
        public static let deviceLabelLength = 40
        /// `runs:` page size when none is given.
        public static let defaultRunsLimit = 20
        /// Largest `runs:` page size.
        public static let maximumRunsLimit = 100
        /// Longest share link (`share:`), in seconds: 7 days.
        public static let longestShare: Double = 604_800
        /// A share link's time when `share:` gives none: 24 hours.
        public static let defaultShare: Double = 86_400
        /// Seconds a share link may last.
        public static let shareSeconds: ClosedRange<Double> = 60...longestShare
        /// Metres a privacy zone (`privacy:`) may have.
        public static let privacyZone: ClosedRange<Double> = 0...1000
        /// Metres a checkpoint interval (`coach:NAME every=M`) may have.
        public static let checkpointInterval: ClosedRange<Double> = 100...100_000
        /// Speeds a replay (`replay:`) may have.
        public static let replaySpeed: ClosedRange<Double> = 1...100
    }

    /// The command's word (the part before `:`).
    public var word: String {
        switch self {
        case .identify: return "iam"
        case .location: return "loc"
        case .stop: return "stop"
        case .watch: return "watch"
        case .coach: return "coach"
        case .unwatch: return "unwatch"
        case .cheer: return "msg"
        case .ping: return "ping"
        case .help: return "help"
        case .quit: return "quit"
        case .stats: return "stats"
        case .listRuns: return "runs"
        case .showRun: return "run"
        case .showBadges: return "badges"
        case .addDevice, .listDevices: return "device"
        case .removeDevice: return "undevice"
        case .goal: return "goal"
        case .leaders, .courseLeaders: return "leaders"
        case .setPrivate: return "private"
        case .privacyZone: return "privacy"
        case .share: return "share"
        case .unshare: return "unshare"
        case .replay: return "replay"
        case .course: return "course"
        }
    }

    /// The canonical line, without newline; `Command.parse(line) == self` for every parsed command.
    public var line: String {
        switch self {
        case .identify(let name, let key):
            return key.map { "iam:\(name) \($0)" } ?? "iam:\(name)"
        case .location(let fix):
            return "loc:\(NumberFormat.plain(fix.latitude)),\(NumberFormat.plain(fix.longitude)),"
                + "\(NumberFormat.plain(fix.accuracy)),\(fix.timestampText)"
        case .stop(let save):
            return save ? "stop:" : "stop:discard"
        case .unwatch(let target):
            return "\(word):\(target.text)"
        case .watch(let target, let token):
            return "watch:\(target.text)" + (token.map { " " + $0 } ?? "")
        case .coach(let target, let token, let every):
            return "coach:\(target.text)" + (token.map { " " + $0 } ?? "") + (every.map { " every=" + NumberFormat.plain($0) } ?? "")
        case .cheer(let text):
            return "msg:\(text)"
        case .ping, .help, .quit, .stats:
            return "\(word):"
        case .listRuns(let name, let offset, let limit):
            return "runs:\(name) \(offset) \(limit)"
        case .showRun(let id):
            return "run:\(id)"
        case .showBadges(let name):
            return "badges:\(name)"
        case .addDevice(let label):
            return "device:" + (label ?? "")
        case .listDevices:
            return "device:list"
        case .removeDevice(let token):
            return "undevice:\(token ?? "*")"
        case .goal(let goal?):
            return "goal:\(goal.argumentText)"
        case .goal(nil):
            return "goal:off"
        case .leaders(let goal):
            return "leaders:" + (goal.map { NumberFormat.plain($0) } ?? "")
        case .courseLeaders(let course):
            return "leaders:course=\(course)"
        case .setPrivate(let isPrivate):
            return isPrivate ? "private:on" : "private:off"
        case .privacyZone(let metres):
            return "privacy:\(NumberFormat.plain(metres))"
        case .share(let seconds):
            return "share:" + (seconds.map { NumberFormat.plain($0) } ?? "")
        case .unshare(let token):
            return "unshare:\(token ?? "*")"
        case .replay(let runID?, let speed):
            return "replay:\(runID) \(NumberFormat.plain(speed))"
        case .replay(nil, _):
            return "replay:off"
        case .course(let name):
            return "course:\(name ?? "off")"
        }
    }

    /// Appends the line and `\n`.
    public func append(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
    }

    /// True when `name` is a valid runner name: 1...32 of `A-Z a-z 0-9 _ . -`, but not `.` or `..` (a name is a
    /// URL path segment as it is, and those two are not).
    public static func isValidName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { CommandParser.isValidName($0, 0..<$0.count) }
    }

    /// True when `token` can be a share token (`watch:NAME TOKEN`): 32 hex digits, as `share:` issues them.
    public static func isValidShareToken(_ token: String) -> Bool {
        var token = token
        return token.withUTF8 { CommandParser.isShareToken($0, 0..<$0.count) }
    }

    /// True when `key` is a valid key: 1...64 ASCII letters and digits.
    public static func isValidKey(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { CommandParser.isValidKey($0, 0..<$0.count) }
    }
}
