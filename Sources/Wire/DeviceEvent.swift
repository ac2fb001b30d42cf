/// `device:NAME id=ID label="…" created=UNIX app="…" seen=UNIX batt=PCT encrypted=yes|no [note="…"]` — one of
/// the runner's phones in a `device:list` answer: its device token (known by the first 8 hex digits of the
/// token's SHA-256, which `undevice:ID` accepts), the label given at `device:LABEL`, and what the server last
/// heard from it.
public struct DeviceEvent: WireEvent {
    /// `device`.
    public static let kind = "device"
    /// The hint sent with `encrypted=yes`: what to change in the app.
    public static let encryptedNote = "this phone sends encrypted OwnTracks messages the server cannot read: "
        + "in OwnTracks, clear Preferences > Connection > Encryption key (secret)"

    /// The runner the token posts for.
    public var runner: String
    /// The first 8 hex digits of the token's SHA-256.
    public var id: String
    /// The label given at `device:LABEL`; nil (`-`) without one.
    public var label: String?
    /// When the token was made, unix seconds.
    public var created: Double
    /// The app that last posted with the token ("OwnTracks", "Traccar Client", …); nil (`-`) when none has since
    /// the server started.
    public var app: String?
    /// When the server last got a position with the token, unix seconds; nil (`-`) when it has not since it
    /// started.
    public var seen: Double?
    /// The battery level in percent the app last reported; nil (`-`) for none.
    public var battery: Double?
    /// True when the last message with the token was an encrypted OwnTracks one (unreadable).
    public var encrypted: Bool
    /// What to do about it, for people (with `encrypted`); nil otherwise.
    public var note: String?

    /// Creates the event; `note` defaults to ``encryptedNote`` when `encrypted`.
    public init(runner: String, id: String, label: String?, created: Double, app: String?, seen: Double?,
                battery: Double?, encrypted: Bool, note: String? = nil) {
        self.runner = runner
        self.id = id
        self.label = label
        self.created = created
        self.app = app
        self.seen = seen
        self.battery = battery
        self.encrypted = encrypted
        self.note = note ?? (encrypted ? Self.encryptedNote : nil)
    }

    /// Reads the event.
    public init(event: Event) throws(WireError) {
        try event.expect(kind: Self.kind)
        self.init(runner: event.subject, id: try event.string("id"), label: try event.optionalString("label"),
                  created: try event.double("created"), app: try event.optionalString("app"),
                  seen: try event.optionalDouble("seen"), battery: try event.optionalDouble("batt"),
                  encrypted: try event.bool("encrypted"), note: event["note"])
    }

    /// The generic form.
    public var event: Event {
        var fields: [Event.Field] = [
            Event.Field("id", id),
            .textOrDash("label", label),
            .number("created", created, 0),
            .textOrDash("app", app),
            .number("seen", seen, 0),
            .number("batt", battery, 0),
            .yesNo("encrypted", encrypted),
        ]
        if let note { fields.append(Event.Field("note", note)) }
        return Event(kind: Self.kind, subject: runner, fields: fields)
    }
}
