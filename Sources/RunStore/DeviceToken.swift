/// A phone app's device token, as stored: only its SHA-256, the runner it posts for, and when it was made.
public struct DeviceToken: Sendable, Hashable {
    /// SHA-256 of the token, 64 hex digits.
    public var hash: String
    /// The runner whose positions the device sends.
    public var runner: String
    /// When the token was made (unix seconds).
    public var created: Double

    /// Creates a record.
    public init(hash: String, runner: String, created: Double) {
        self.hash = hash
        self.runner = runner
        self.created = created
    }
}
