import Wire

/// The runner's own view of their phones: each device token's label, the app that last used it, when, and the
/// battery it reported; and a phone whose messages cannot be read (OwnTracks with encryption on).
extension Hub {
    /// A phone app posted positions with a valid token of `runner`: remembered for `device:list` and the page.
    func deviceReported(token: String, runner: String, app: String, battery: Double?, now: Double) {
        // Issue 25: the roster (helper B).
    }

    /// An OwnTracks message with `"_type":"encrypted"` came with this token: the runner is told in `device:list`
    /// and on the page's "Connect a phone" box. Unknown tokens are ignored.
    func deviceSentEncrypted(token: String, now: Double) {
        // Issue 25: the roster (helper B).
    }
}
