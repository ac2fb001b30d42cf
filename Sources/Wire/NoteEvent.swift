/// `note:NAME reason=R "what to do"` — tells a runner's own connection why its fixes start no run (a cached
/// position, a poor accuracy, a clock far off…), once per reason before the run starts. Spectators never get it.
public struct NoteEvent: WireEvent {
    /// `note`.
    public static let kind = "note"
    /// The runner.
    public var runner: String
    /// The filter's reason word (`stale`, `inaccurate`, `invalid`, `future`, …).
    public var reason: String
    /// What happened and what to do, for people.
    public var text: String

    /// Creates the event.
    public init(runner: String, reason: String, text: String) {
        self.runner = runner
        self.reason = reason
        self.text = text
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, reason: try event.string("reason"), text: event.text ?? "")
    }

    /// The generic form.
    public var event: Event {
        Event(kind: Self.kind, subject: runner, fields: [Event.Field("reason", reason), .text(text)])
    }
}
