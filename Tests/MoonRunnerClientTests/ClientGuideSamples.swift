// The code samples of README.md's "Client library" section, verbatim (ClientGuideTests checks that every ```swift block of the guide
// appears here, and runs these against a real server). Like an app's file, it imports the client library only.
import MoonRunnerClient

// MARK: A runner

/// Joins as `name` (proving it with last time's `key`, if any), sends the fixes and ends the run.
/// Returns the key to keep for next time and the run's summary.
func runOnce(as name: String, key: String?, fixes: [Fix],
             host: String, port: UInt16) async throws -> (key: String, end: RunEndedEvent) {
    let client = MoonRunnerClient(host: host, port: port)
    defer { client.close() }
    let key = try await client.join(name: name, key: key)  // a new name gets a key: store it with the name
    for fix in fixes {
        try client.send(fix)  // returns at once; kept until an ack: covers it, resent after a reconnect
    }
    let end = try await client.stop()  // after every fix sent before it
    let formatter = RunFormatter()  // kilometres or miles, from the user's locale
    print("run \(end.runID): \(formatter.distance(end.distance)) in \(formatter.duration(end.elapsed))")
    return (key, end)
}

// MARK: An async spectator

/// Follows `runner` until their run ends, telling `show` what happens; returns the end.
func follow(_ runner: String, host: String, port: UInt16,
            show: (String) -> Void) async throws -> RunEndedEvent? {
    let client = MoonRunnerClient(host: host, port: port)
    defer { client.close() }
    let events = client.events()  // before watching, so no event slips past
    try client.watch(runner)
    let formatter = RunFormatter()
    for await event in events {
        switch event {
        case .ok(let ok) where ok.what == "watch":
            show("following \(runner)")
        case .pace(let pace):
            show("\(formatter.distance(pace.distance)) at \(formatter.pace(pace.pace))")
        case .badge(let badge):
            show(badge.badgeTier == .earned ? "won \(badge.badgeName)" : "won \(badge.badgeName) (\(badge.tier))")
        case .ended(let end) where end.runner == runner:
            return end
        case .state(.failed(let error)):
            throw error
        default:
            break
        }
    }
    return nil  // the client was closed
}

// MARK: A delegate on the main actor

/// A view model: the client calls it on the main actor, so it keeps plain mutable state.
@MainActor final class LiveRunModel: MoonRunnerClientMainActorDelegate {
    private(set) var distance = "–"
    private(set) var cheers: [String] = []
    private(set) var connection = "offline"
    /// Tells the view to redraw.
    var onChange: () -> Void = {}
    let client: MoonRunnerClient
    private let formatter = RunFormatter()

    init(following runner: String, host: String, port: UInt16) throws {
        client = MoonRunnerClient(host: host, port: port)
        client.mainActorDelegate = self  // held weakly
        try client.watch(runner)
    }

    func client(_ client: MoonRunnerClient, didReceivePace event: PaceEvent) {
        distance = formatter.distance(event.distance)
        onChange()
    }

    func client(_ client: MoonRunnerClient, didReceiveCheer event: CheerEvent) {
        cheers.append("\(event.from): \(event.text)")
        onChange()
    }

    func client(_ client: MoonRunnerClient, didChangeState state: ConnectionState) {
        switch state {
        case .connected: connection = "live"
        case .waitingToReconnect(_, let delay, let reason): connection = "\(reason), again in \(Int(delay.rounded(.up))) s"
        case .failed(let error): connection = error.reason
        default: break
        }
        onChange()
    }
}

// MARK: Reconnecting and resending

/// A client for a phone on a poor network: quick retries at first, then every 30 s at most, and a connection
/// attempt that gives up after 5 s.
func phoneClient(host: String, port: UInt16) -> MoonRunnerClient {
    let configuration = ClientConfiguration(
        host: host, port: port,
        reconnect: ReconnectPolicy(initialDelay: 0.5, multiplier: 2, maximumDelay: 30),
        connectTimeout: 5)
    return MoonRunnerClient(configuration: configuration)
}

/// Resumes `name`'s live run after the app was restarted: the same key, then the fixes the app had not seen
/// acknowledged (the server skips any it already has). Returns how many still wait for an ack.
func resume(as name: String, key: String, unacknowledged fixes: [Fix],
            on client: MoonRunnerClient) async throws -> Int {
    try await client.join(name: name, key: key)
    for fix in fixes { try client.send(fix) }
    return client.unacknowledgedFixCount
}

// MARK: History, errors and cancellation

/// Prints a runner's latest runs; an unknown runner is not an error for this screen.
func printLatestRuns(of runner: String, on client: MoonRunnerClient) async throws {
    let formatter = RunFormatter()
    do {
        let page = try await client.runs(of: runner, limit: 5)
        for item in page.items {
            print("\(formatter.date(item.date))  \(formatter.distance(item.distance))  \(formatter.pace(item.pace))")
        }
    } catch {
        guard error.code == .notFound else { throw error }  // typed throws: error is a MoonRunnerClientError
        print("\(runner) has not run yet")
    }
}

/// Gives up joining after `seconds`, e.g. when the user leaves the screen.
func join(as name: String, on client: MoonRunnerClient, givingUpAfter seconds: Double) async throws -> String? {
    let joining = Task { try await client.join(name: name) }
    let timeout = Task {
        try await Task.sleep(for: .seconds(seconds))
        joining.cancel()  // join throws MoonRunnerClientError.cancelled; the client keeps trying until close()
    }
    defer { timeout.cancel() }
    do {
        return try await joining.value
    } catch MoonRunnerClientError.cancelled {
        return nil
    }
}
