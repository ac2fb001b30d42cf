/// `msg:NAME from=SENDER text="…"` — a cheer about runner NAME, relayed to the runner and its spectators.
public struct CheerEvent: WireEvent {
    /// `msg`.
    public static let kind = "msg"
    /// The runner the cheer is for.
    public var runner: String
    /// Who sent it: the sender's `iam:` name, or `anon`.
    public var from: String
    /// The text (1...280 characters, no control characters).
    public var text: String

    /// Creates the event.
    public init(runner: String, from: String, text: String) {
        self.runner = runner
        self.from = from
        self.text = text
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, from: try event.string("from"), text: try event.string("text"))
    }

    /// The generic form (the text is quoted unless it is a single bare word).
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [Event.Field("from", from), Event.Field("text", text)])
    }
}

/// `ack:NAME ts=TS` — every fix up to and including the one with timestamp TS is safely stored.
public struct AckEvent: WireEvent {
    /// `ack`.
    public static let kind = "ack"
    /// The runner.
    public var runner: String
    /// The newest committed fix's timestamp, as the runner sent it.
    public var timestamp: String

    /// Creates the event.
    public init(runner: String, timestamp: String) {
        self.runner = runner
        self.timestamp = timestamp
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, timestamp: try event.string("ts"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [Event.Field("ts", timestamp)])
    }
}

/// `ok:WHAT key=value …` — a command succeeded, e.g. `ok:iam name=ann key=… new=yes`, `ok:ping`.
public struct OkEvent: WireEvent {
    /// `ok`.
    public static let kind = "ok"
    /// `subject`: the line's subject is not a runner.
    public static let subjectKey = "subject"
    /// The command word that succeeded.
    public var what: String
    /// Details, all keyed, in order.
    public var fields: [Event.Field]

    /// Creates the event.
    public init(what: String, fields: [Event.Field] = []) {
        self.what = what
        self.fields = fields
    }

    /// Creates the event from key/value pairs.
    public init(what: String, _ pairs: KeyValuePairs<String, String>) {
        self.init(what: what, fields: pairs.map { Event.Field($0.key, $0.value) })
    }

    /// The value of a detail.
    public subscript(key: String) -> String? {
        fields.first { $0.key == key }?.value
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(what: event.subject, fields: event.fields)
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: what, fields: fields)
    }
}

/// `err:CODE "reason"` — a command failed (or the connection is about to be closed, for some codes).
public struct ErrorEvent: WireEvent {
    /// `err`.
    public static let kind = "err"
    /// `subject`: the line's subject is not a runner.
    public static let subjectKey = "subject"
    /// The code.
    public var code: ErrorCode
    /// A human explanation.
    public var reason: String

    /// Creates the event.
    public init(code: ErrorCode, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The event for a parse or server error.
    public init(_ error: WireError) {
        self.init(code: error.code, reason: error.reason)
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        guard let code = ErrorCode(rawValue: event.subject) else {
            throw WireError(.badArgument, "err: unknown code \(event.subject)")
        }
        self.init(code: code, reason: event.text ?? "")
    }

    /// The error this event carries.
    public var error: WireError { WireError(code, reason) }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: code.rawValue, fields: [.text(reason)])
    }
}

/// `done:WHAT count=N more=yes|no` — ends a bounded answer (WHAT = runs, run, badges, help, leaders, replay or
/// device).
public struct DoneEvent: WireEvent {
    /// `done`.
    public static let kind = "done"
    /// `subject`: the line's subject is not a runner.
    public static let subjectKey = "subject"
    /// The command word answered.
    public var what: String
    /// Lines sent before this one.
    public var count: Int
    /// For `runs:`, whether another page exists; `no` otherwise.
    public var more: Bool

    /// Creates the event.
    public init(what: String, count: Int, more: Bool = false) {
        self.what = what
        self.count = count
        self.more = more
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(what: event.subject, count: try event.int("count"), more: try event.bool("more"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: what, fields: [.integer("count", count), .yesNo("more", more)])
    }
}

/// `help:COMMAND text="…"` — one line of the `help:` answer.
public struct HelpEvent: WireEvent {
    /// `help`.
    public static let kind = "help"
    /// `subject`: the line's subject is not a runner.
    public static let subjectKey = "subject"
    /// The command word described.
    public var command: String
    /// Its usage and meaning.
    public var text: String

    /// Creates the event.
    public init(command: String, text: String) {
        self.command = command
        self.text = text
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(command: event.subject, text: try event.string("text"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: command, fields: [Event.Field("text", text)])
    }

    /// The standard help lines, one per command, in protocol.md order.
    public static let standard: [HelpEvent] = [
        HelpEvent(command: "iam", text: "iam:NAME or iam:NAME KEY - become runner NAME; the reply ok:iam carries your key, keep it to resume"),
        HelpEvent(command: "loc", text: "loc:LAT,LON,ACC,TS - one GPS fix: degrees, degrees, metres, unix seconds"),
        HelpEvent(command: "stop", text: "stop: saves your run, stop:discard throws it away"),
        HelpEvent(command: "watch", text: "watch:NAME [TOKEN] or watch:* - every event of a runner (a private one with its share token) or of everyone"),
        HelpEvent(command: "coach", text: "coach:NAME [TOKEN] or coach:* [every=M] - run, badge, end and alert events only (a private runner's with its share token); a checkpoint alert every M metres"),
        HelpEvent(command: "unwatch", text: "unwatch:NAME or unwatch:* - stop watching or coaching"),
        HelpEvent(command: "msg", text: "msg:TEXT - cheer the runners you follow (or your own audience when running), up to 280 characters"),
        HelpEvent(command: "ping", text: "ping: - answered by ok:ping"),
        HelpEvent(command: "help", text: "help: - this list"),
        HelpEvent(command: "quit", text: "quit: - close the connection (a live run stays open for resuming)"),
        HelpEvent(command: "stats", text: "stats: - server counters"),
        HelpEvent(command: "runs", text: "runs:NAME [OFFSET [LIMIT]] - the runner's runs, newest first, up to 100 per page"),
        HelpEvent(command: "run", text: "run:ID - one run: summary, splits, checkpoints and badges"),
        HelpEvent(command: "badges", text: "badges:NAME - the runner's badge board"),
        HelpEvent(command: "device", text: "device: or device:LABEL - a token for a phone app posting positions over HTTP (OsmAnd, Traccar, OwnTracks); device:list - your phones"),
        HelpEvent(command: "undevice", text: "undevice:TOKEN, undevice:ID or undevice:* - revoke a device token (or the id device:list shows), or all of yours"),
        HelpEvent(command: "goal", text: "goal:DISTANCE_M [TARGET_S [MARGIN_PCT]] or goal:off - your goal: predicted finish on every pace, off-pace alerts"),
        HelpEvent(command: "leaders", text: "leaders:, leaders:GOAL_M or leaders:course=NAME - the live runners ranked by distance (on a course: by how far along it)"),
        HelpEvent(command: "private", text: "private:on or private:off - only you and your share links see your runs, or everyone"),
        HelpEvent(command: "privacy", text: "privacy:METRES - hide the first and last METRES (0-1000) of your runs from others"),
        HelpEvent(command: "share", text: "share: or share:SECONDS - a share link's token for watch:NAME TOKEN and the page (default 24 h)"),
        HelpEvent(command: "unshare", text: "unshare:TOKEN or unshare:* - revoke a share link, or all of yours, at once"),
        HelpEvent(command: "replay", text: "replay:RUN_ID [SPEED] or replay:off - a saved run's events again, as if live, 1-100 times faster"),
        HelpEvent(command: "course", text: "course:NAME or course:off - follow a race course: along, to go, the next point and its ETA on every pace"),
    ]
}

/// `stats:server key=N …` — server counters, in the server's order.
public struct StatsEvent: WireEvent {
    /// `stats`.
    public static let kind = "stats"
    /// `subject`: the line's subject is not a runner.
    public static let subjectKey = "subject"

    /// One named counter.
    public struct Counter: Sendable, Hashable {
        /// Lowercase `[a-z0-9_]+`.
        public var name: String
        /// The count.
        public var value: Int

        /// Creates a counter.
        public init(name: String, value: Int) {
            self.name = name
            self.value = value
        }
    }

    /// The subject of a single server's line.
    public static let serverSubject = "server"

    /// The counters in order.
    public var counters: [Counter]
    /// Whose counters: `server`, or in a cluster the node's name (`serve --node`).
    public var subject: String

    /// Creates the event.
    public init(counters: [Counter], subject: String = StatsEvent.serverSubject) {
        self.counters = counters
        self.subject = subject
    }

    /// Creates the event from `(name, value)` pairs.
    public init(_ pairs: [(String, Int)], subject: String = StatsEvent.serverSubject) {
        self.init(counters: pairs.map { Counter(name: $0.0, value: $0.1) }, subject: subject)
    }

    /// The value of a counter.
    public subscript(name: String) -> Int? {
        counters.first { $0.name == name }?.value
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        var counters: [Counter] = []
        for field in event.fields {
            guard let key = field.key else { throw WireError(.badArgument, "stats: fields are key=N") }
            guard let value = DecimalParser.integer(field.value) else {
                throw WireError(.badNumber, "stats: \(key)= is not a whole number")
            }
            counters.append(Counter(name: key, value: Int(truncatingIfNeeded: value)))
        }
        self.init(counters: counters, subject: event.subject)
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: subject, fields: counters.map { .integer($0.name, $0.value) })
    }
}
