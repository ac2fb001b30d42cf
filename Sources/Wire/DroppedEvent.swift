/// `dropped:msg count=N` — N cheers were not sent to this connection because it reads more slowly than they
/// came: cheers are the first thing a slow reader goes without (before any run, badge or end event), and never
/// the reason a connection is closed. Sent once the connection has caught up, counting the cheers since the last.
public struct DroppedEvent: WireEvent {
    /// `dropped`.
    public static let kind = "dropped"
    /// `subject`: the line's subject is the kind of event dropped, not a runner.
    public static let subjectKey = "subject"
    /// The kind of event dropped (`msg`).
    public var what: String
    /// How many.
    public var count: Int

    /// Creates the event.
    public init(what: String, count: Int) {
        self.what = what
        self.count = count
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(what: event.subject, count: try event.int("count"))
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: what, fields: [.integer("count", count)])
    }
}
