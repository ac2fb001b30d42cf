/// A phone app's device token, as stored: only its SHA-256, the runner it posts for, when it was made, and the
/// label the runner gave it (`device:LABEL`).
public struct DeviceToken: Sendable, Hashable {
    /// SHA-256 of the token, 64 hex digits.
    public var hash: String
    /// The runner whose positions the device sends.
    public var runner: String
    /// When the token was made (unix seconds).
    public var created: Double
    /// The runner's name for the phone (`device:Ann's Pixel`), up to 40 characters; nil without one.
    public var label: String?

    /// Creates a record.
    public init(hash: String, runner: String, created: Double, label: String? = nil) {
        self.hash = hash
        self.runner = runner
        self.created = created
        self.label = label
    }

    /// The short id the runner's list shows and `undevice:ID` accepts: the hash's first 8 hex digits.
    public var id: String { String(hash.prefix(8)) }
}
