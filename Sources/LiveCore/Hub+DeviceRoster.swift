import RunStore
import Wire

/// One device token as the runner's list of phones shows it: the stored token (its hash, label, when it was
/// made) and what the server last heard from the phone. The last three live in memory only (a restarted server
/// knows none yet), and on the loop that got the phone's post (the runner's, with several loops).
struct DeviceRosterEntry {
    var token: DeviceToken
    /// The app that last posted with the token.
    var app: String?
    /// When the server last got a position with the token (server time, unix seconds).
    var seen: Double?
    /// The battery level the app last reported, percent.
    var battery: Double?
    /// True when the last message with the token was an encrypted OwnTracks one.
    var encrypted = false

    /// The line `device:list` shows for it.
    var event: DeviceEvent {
        DeviceEvent(runner: token.runner, id: token.id, label: token.label, created: token.created, app: app, seen: seen,
                    battery: battery, encrypted: encrypted)
    }
}

/// The runner's own view of their phones: each device token's label, the app that last used it, when, and the
/// battery it reported; and a phone whose messages cannot be read (OwnTracks with encryption on).
extension Hub {
    /// A phone app posted positions with a valid token of `runner`: remembered for `device:list` and the page.
    package func deviceReported(token: String, runner: String, app: String, battery: Double?, now: Double) {
        guard Command.isValidKey(token) else { return }
        let hash = RunnerKey.hash(token)
        guard var entry = deviceRoster[hash], entry.token.runner == runner else { return }
        entry.app = app
        entry.seen = now
        if let battery, battery.isFinite { entry.battery = min(max(battery, 0), 100) }
        entry.encrypted = false
        deviceRoster[hash] = entry
    }

    /// An OwnTracks message with `"_type":"encrypted"` came with this token: the runner is told in `device:list`
    /// and on the page's "Connect a phone" box. Unknown tokens are ignored.
    package func deviceSentEncrypted(token: String, now: Double) {
        guard Command.isValidKey(token) else { return }
        let hash = RunnerKey.hash(token)
        guard deviceRoster[hash] != nil else { return }
        deviceRoster[hash]?.app = "OwnTracks"
        deviceRoster[hash]?.encrypted = true
    }

    /// The runner's phones, oldest token first, as `device:list` shows them.
    package func deviceEvents(of runner: String) -> [DeviceEvent] {
        deviceRoster.values.filter { $0.token.runner == runner }
            .sorted { ($0.token.created, $0.token.hash) < ($1.token.created, $1.token.hash) }
            .map(\.event)
    }
}
