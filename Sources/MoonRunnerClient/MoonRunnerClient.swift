import Foundation
import RunCore
import Synchronization
import Wire

/// A MoonRunner Live client: a runner streaming fixes, a spectator or coach following runners, or anyone
/// reading history — over one TCP connection that reconnects by itself.
///
/// Use it with `events()` (an `AsyncStream` of `ClientEvent`), a `mainActorDelegate` (typed callbacks on the
/// main actor, for app code), a `delegate` (typed callbacks on the I/O thread), or any mix. README's "Client library" section is the
/// guide, with tested samples.
///
/// ```swift
/// let client = MoonRunnerClient(host: "127.0.0.1", port: 4242)
/// let key = try await client.join(name: "ann")          // keep the key to resume later
/// try client.send(Fix(latitude: 48.8566, longitude: 2.3522, accuracy: 5, timestamp: now))
/// let end = try await client.stop()
/// ```
///
/// **Reliability.** Fixes are kept until an `ack:` covers them. When the server drops the connection the client
/// reconnects with backoff (`ReconnectPolicy`), sends `iam:NAME KEY` (so the run resumes), its `watch:`/`coach:`
/// subscriptions, then the unacknowledged fixes in order — and a pending `stop:` after them.
///
/// **Replies.** The server answers a connection's commands in order (protocol.md §1), so each reply goes to
/// the call that is first in line for it; pushed lines (events, a batch's `err:storage`) fail no call.
///
/// **Cancellation.** Every async call ends with `.cancelled` as soon as its task is cancelled. The command is
/// not recalled (its reply is matched and dropped), and the client carries on until `close()`.
///
/// **Concurrency.** The class is `Sendable`: call it from any thread or task. All connection work runs on one
/// client I/O thread (Linux: a Reactor event loop shared by the process's clients; Apple platforms: a run-loop
/// thread). `delegate` methods are called there, in order; `mainActorDelegate` methods on the main actor, in
/// order. Mutable state shared with callers sits behind a `Mutex`; the protocol state is confined to the I/O
/// thread.
public final class MoonRunnerClient: Sendable {
    /// Where to connect and how to reconnect.
    public let configuration: ClientConfiguration
    let io: ClientIOThread
    let engine: ClientEngine
    private let shared = Mutex(Shared())

    /// State read and written from any thread.
    private struct Shared {
        weak var delegate: (any MoonRunnerClientDelegate)?
        weak var mainActorDelegate: (any MoonRunnerClientMainActorDelegate)?
        var streams: [Int: AsyncStream<ClientEvent>.Continuation] = [:]
        var nextStreamID = 0
        var state = ConnectionState.idle
        var joinedName: String?
        var name: String?
        var key: String?
        var unacked = 0
    }

    /// Creates a client; it connects on `connect()` or the first command.
    public init(configuration: ClientConfiguration = ClientConfiguration()) {
        self.configuration = configuration
        io = ClientIOThread.shared
        engine = ClientEngine(configuration: configuration, io: io)
        engine.owner = self
    }

    /// Creates a client for `host:port` with the default reconnect policy.
    public convenience init(host: String, port: UInt16) {
        self.init(configuration: ClientConfiguration(host: host, port: port))
    }

    deinit {
        let engine = self.engine
        io.execute { engine.close() }
    }

    /// Receives typed callbacks on the client I/O thread (held weakly).
    public var delegate: (any MoonRunnerClientDelegate)? {
        get { shared.withLock { $0.delegate } }
        set { shared.withLock { $0.delegate = newValue } }
    }

    /// Receives typed callbacks on the main actor, in order (held weakly): for view models and other
    /// `@MainActor` code. See `MoonRunnerClientMainActorDelegate` for when the calls come.
    public var mainActorDelegate: (any MoonRunnerClientMainActorDelegate)? {
        get { shared.withLock { $0.mainActorDelegate } }
        set { shared.withLock { $0.mainActorDelegate = newValue } }
    }

    /// The connection's current state.
    public var state: ConnectionState { shared.withLock { $0.state } }
    /// The runner name once the server accepted it.
    public var name: String? { shared.withLock { $0.name } }
    /// The runner's key (given to `join` or issued by the server for a new name): store it to resume.
    public var key: String? { shared.withLock { $0.key } }
    /// Fixes sent and not yet covered by an `ack:` (or dropped with their ended run) — the ones just sent included.
    public var unacknowledgedFixCount: Int { shared.withLock { $0.unacked } }

    /// A new stream of every event from now on (each call makes an independent stream). It finishes when the
    /// client is closed or gives up.
    public func events(bufferingPolicy: AsyncStream<ClientEvent>.Continuation.BufferingPolicy = .unbounded)
        -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self, bufferingPolicy: bufferingPolicy)
        let final: ConnectionState? = shared.withLock { shared in
            if shared.state.isFinal { return shared.state }
            let id = shared.nextStreamID
            shared.nextStreamID += 1
            shared.streams[id] = continuation
            continuation.onTermination = { [weak self] _ in
                _ = self?.shared.withLock { $0.streams.removeValue(forKey: id) }
            }
            return nil
        }
        if let final {
            continuation.yield(.state(final))
            continuation.finish()
        }
        return stream
    }

    /// Starts connecting (commands do this by themselves).
    public func connect() {
        let engine = self.engine
        io.execute { engine.connectIfIdle() }
    }

    /// Closes both streams for good; waiting calls fail with `.closed` and event streams finish. A live run
    /// stays open on the server for its resume window.
    public func close() {
        let engine = self.engine
        io.execute { engine.close() }
    }

    // MARK: Runner

    /// Becomes runner `name`, proving it with `key` if the name is claimed; returns the key to keep (issued by
    /// the server for a new name). Throws `.server(code: .wrongKey, …)` for a claimed name without its key.
    @discardableResult
    public func join(name: String, key: String? = nil) async throws(MoonRunnerClientError) -> String {
        guard Command.isValidName(name) else {
            throw .invalidArgument("a name is 1-32 of A-Z a-z 0-9 _ . -")
        }
        if let key, !Command.isValidKey(key) { throw .invalidArgument("a key is 1-64 ASCII letters and digits") }
        shared.withLock { $0.joinedName = name }
        _ = try await perform { engine, completion in engine.join(name: name, key: key, completion: completion) }
        guard let key = self.key else { throw .invalidArgument("the server issued no key") }
        return key
    }

    /// Sends one GPS fix (kept until acknowledged, resent after reconnects). Throws `.notJoined` before
    /// `join`, `.invalidArgument` for a coordinate out of range or a number that is not finite. The line
    /// protocol's `loc:` has no altitude, so `fix.altitude` is not sent (phone apps' HTTP protocols carry it).
    public func send(_ fix: Fix) throws(MoonRunnerClientError) {
        try requireJoined()
        guard fix.latitude.isFinite, fix.longitude.isFinite, fix.accuracy.isFinite, fix.timestamp.isFinite,
              abs(fix.latitude) <= 90, abs(fix.longitude) <= 180, fix.accuracy >= 0,
              abs(fix.timestamp) < NumberFormat.maximumMagnitude else {
            throw .invalidArgument("a fix needs finite numbers, latitude within ±90 and longitude within ±180")
        }
        let command = LocationCommand(latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy,
                                      timestamp: fix.timestamp)
        shared.withLock { $0.unacked += 1 }
        let engine = self.engine
        io.execute { engine.enqueue(command) }
    }

    /// Ends the live run after every fix sent before it, saving it (or discarding it with `save: false`);
    /// returns the `end:` summary.
    @discardableResult
    public func stop(save: Bool = true) async throws(MoonRunnerClientError) -> RunEndedEvent {
        try requireJoined()
        let lines = try await perform { engine, completion in engine.requestStop(save: save, completion: completion) }
        for case .ended(let end) in lines { return end }
        throw .connectionLost
    }

    /// Sends a cheer (to the client's own audience if it runs, else to the runners it follows); returns how
    /// many runners it reached.
    @discardableResult
    public func cheer(_ text: String) async throws(MoonRunnerClientError) -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard (1...Command.Limits.cheerLength).contains(trimmed.unicodeScalars.count),
              !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArgument("a cheer is 1-280 characters without control characters")
        }
        let lines = try await request(.cheer(trimmed))
        for case .ok(let ok) in lines { return ok["count"].flatMap { Int($0) } ?? 0 }
        return 0
    }

    /// Sets the goal of the live run (or the next) and the later ones: `distance` metres (100–1,000,000),
    /// optionally in `targetTime` seconds, off pace beyond `marginPercent` (1–50, default 5). Paces then carry
    /// the predicted finish (`PaceEvent.forecast`) and coaches get off-pace alerts. Needs `join` first.
    public func setGoal(distance: Double, targetTime: Double? = nil,
                        marginPercent: Double? = nil) async throws(MoonRunnerClientError) {
        guard GoalCommand.distanceRange.contains(distance),
              targetTime.map(GoalCommand.targetRange.contains) ?? true,
              marginPercent.map(GoalCommand.marginRange.contains) ?? true else {
            throw .invalidArgument("a goal is 100-1000000 m, 60-604800 s, a margin of 1-50 %")
        }
        try requireJoined()
        _ = try await request(.goal(GoalCommand(distance: distance, targetTime: targetTime, marginPercent: marginPercent)))
    }

    /// Clears the goal.
    public func clearGoal() async throws(MoonRunnerClientError) {
        try requireJoined()
        _ = try await request(.goal(nil))
    }

    /// Follows a race course stored on the server (`course:NAME`) for the live run (or the next) and the later
    /// ones: paces then carry where along it the runner is (`PaceEvent.course`) and the finish predicted along it,
    /// passed points come as `ClientEvent.point`, and coaches get off-course alerts. Returns the course's length
    /// in metres and its number of points. Needs `join` first; an unknown course is `.server(code: .notFound, …)`.
    @discardableResult
    public func follow(course name: String) async throws(MoonRunnerClientError) -> (length: Double, points: Int) {
        guard Command.isValidName(name) else { throw .invalidArgument("a course name is 1-32 of A-Z a-z 0-9 _ . -") }
        try requireJoined()
        let lines = try await request(.course(name: name))
        for case .ok(let ok) in lines {
            return (ok["dist"].flatMap(Double.init) ?? 0, ok["points"].flatMap { Int($0) } ?? 0)
        }
        return (0, 0)
    }

    /// The live runners following course `name`, furthest along first (at most 100): `standing.distance` is
    /// how far along the course, the gaps to the leader along it.
    public func leaders(course name: String) async throws(MoonRunnerClientError) -> [LeaderEvent] {
        guard Command.isValidName(name) else { throw .invalidArgument("a course name is 1-32 of A-Z a-z 0-9 _ . -") }
        let lines = try await request(.courseLeaders(name))
        return lines.compactMap { if case .leader(let leader) = $0 { leader } else { nil } }
    }

    /// Stops following a course (`course:off`).
    public func leaveCourse() async throws(MoonRunnerClientError) {
        try requireJoined()
        _ = try await request(.course(name: nil))
    }

    /// The live runners ranked by distance, best first (at most 100); with `goal`, only those with that goal
    /// distance.
    public func leaders(goal: Double? = nil) async throws(MoonRunnerClientError) -> [LeaderEvent] {
        if let goal, !GoalCommand.distanceRange.contains(goal) { throw .invalidArgument("a goal is 100-1000000 m") }
        let lines = try await request(.leaders(goal: goal))
        return lines.compactMap { if case .leader(let leader) = $0 { leader } else { nil } }
    }

    // MARK: Privacy

    /// Makes the runner's runs visible only to itself and its share links (`true`), or to everyone. Remembered by
    /// the server. Needs `join` first.
    public func setPrivate(_ isPrivate: Bool) async throws(MoonRunnerClientError) {
        try requireJoined()
        _ = try await request(.setPrivate(isPrivate))
    }

    /// Hides the first and last `metres` (0–1,000) of every run from everyone but the runner. Needs `join` first.
    public func setPrivacyZone(_ metres: Double) async throws(MoonRunnerClientError) {
        guard Command.Limits.privacyZone.contains(metres) else { throw .invalidArgument("a privacy zone is 0-1000 metres") }
        try requireJoined()
        _ = try await request(.privacyZone(metres))
    }

    /// A share link's token for the runner's runs, valid for `seconds` (60–604,800; default 24 h), and when it
    /// expires (ISO 8601). Give it to `watch(_:token:)` or append `?token=` to the runner's page.
    public func share(seconds: Double? = nil) async throws(MoonRunnerClientError) -> (token: String, expires: String) {
        if let seconds, !Command.Limits.shareSeconds.contains(seconds) {
            throw .invalidArgument("a share link lasts 60-604800 seconds")
        }
        try requireJoined()
        for case .ok(let ok) in try await request(.share(seconds: seconds)) {
            if let token = ok["token"], let expires = ok["expires"] { return (token, expires) }
        }
        throw .connectionLost
    }

    /// Revokes one share token, or all of the runner's (`nil`), at once; how many.
    @discardableResult
    public func unshare(_ token: String? = nil) async throws(MoonRunnerClientError) -> Int {
        if let token, !Command.isValidKey(token) { throw .invalidArgument("a share token is letters and digits") }
        try requireJoined()
        for case .ok(let ok) in try await request(.unshare(token: token)) { return ok["count"].flatMap { Int($0) } ?? 0 }
        return 0
    }

    // MARK: Spectator and coach

    /// Follows every event of a runner, or of everyone (`.everyone`); kept across reconnects.
    public func watch(_ target: WatchTarget) throws(MoonRunnerClientError) {
        try subscribe(.watch(target), target)
    }

    /// Follows a private runner's every event with one of its share tokens (`share(seconds:)`); a wrong or
    /// revoked token arrives as an error (`wrongKey`, later `revoked`).
    public func watch(_ name: String, token: String) throws(MoonRunnerClientError) {
        try Self.validate(shareToken: token)
        let target = WatchTarget.runner(name)
        try subscribe(.watch(target, token: token), target)
    }

    /// Follows only run, badge, end and alert events of a runner or of everyone; kept across reconnects. With
    /// `every` (metres, 100–100,000) an `alert:` of kind `checkpoint` also arrives at every multiple of it.
    public func coach(_ target: WatchTarget, every: Double? = nil) throws(MoonRunnerClientError) {
        try Self.validate(every: every)
        try subscribe(.coach(target, every: every), target)
    }

    /// Stops watching and coaching the target.
    public func unwatch(_ target: WatchTarget) throws(MoonRunnerClientError) {
        try Self.validate(target)
        let engine = self.engine
        io.execute { engine.unsubscribe(target) }
    }

    /// `watch(_:)` by name; `*` means everyone.
    public func watch(_ name: String) throws(MoonRunnerClientError) { try watch(WatchTarget(parsing: name)) }
    /// `coach(_:)` by name; `*` means everyone.
    public func coach(_ name: String, every: Double? = nil) throws(MoonRunnerClientError) {
        try coach(WatchTarget(parsing: name), every: every)
    }
    /// `coach(_:every:)` of a private runner with one of its share tokens.
    public func coach(_ name: String, token: String, every: Double? = nil) throws(MoonRunnerClientError) {
        try Self.validate(shareToken: token)
        try Self.validate(every: every)
        let target = WatchTarget.runner(name)
        try subscribe(.coach(target, token: token, every: every), target)
    }
    /// `unwatch(_:)` by name; `*` means everyone.
    public func unwatch(_ name: String) throws(MoonRunnerClientError) { try unwatch(WatchTarget(parsing: name)) }

    private func subscribe(_ command: Command, _ target: WatchTarget) throws(MoonRunnerClientError) {
        try Self.validate(target)
        let engine = self.engine
        io.execute { engine.subscribe(command) }
    }

    /// Throws unless the client has joined as a runner (the commands only a runner's own connection may send).
    private func requireJoined() throws(MoonRunnerClientError) {
        guard shared.withLock({ $0.joinedName }) != nil else { throw .notJoined }
    }

    private static func validate(shareToken token: String) throws(MoonRunnerClientError) {
        guard Command.isValidShareToken(token) else { throw .invalidArgument("a share token is 32 hex digits") }
    }

    private static func validate(every: Double?) throws(MoonRunnerClientError) {
        if let every, !Command.Limits.checkpointInterval.contains(every) {
            throw .invalidArgument("every is 100-100000 metres")
        }
    }

    private static func validate(_ target: WatchTarget) throws(MoonRunnerClientError) {
        if case .runner(let name) = target, !Command.isValidName(name) {
            throw .invalidArgument("a name is 1-32 of A-Z a-z 0-9 _ . -")
        }
    }

    // MARK: Plumbing

    /// Sends `command` and waits for its answer lines.
    func request(_ command: Command) async throws(MoonRunnerClientError) -> [ServerEvent] {
        try await perform { engine, completion in engine.request(command, completion: completion) }
    }

    /// Runs `body` on the I/O thread and waits for the completion it is given — or for the task's cancellation,
    /// which ends the wait with `.cancelled` at once. A command already sent stays in the reply queue (its
    /// reply, when it comes, is matched to it and dropped); one not sent yet is not sent.
    private func perform(_ body: @escaping @Sendable (ClientEngine, @escaping RequestCompletion) -> Void)
        async throws(MoonRunnerClientError) -> [ServerEvent] {
        let engine = self.engine
        let reply = ReplySlot()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[ServerEvent], MoonRunnerClientError>, Never>) in
                guard reply.install(continuation) else { return }
                io.execute {
                    guard !reply.isSettled else { return }
                    body(engine, { reply.settle($0) })
                }
            }
        } onCancel: {
            reply.settle(.failure(.cancelled))
        }
        return try result.get()
    }

    /// Engine → callers: the identity the server confirmed.
    func recordIdentity(name: String?, key: String?) {
        shared.withLock {
            $0.name = name
            $0.key = key
        }
    }

    /// Engine → callers: `count` fixes were acknowledged (or forgotten with their run).
    ///
    /// `send` counts a fix before the I/O thread sees it, and the engine reports only what leaves, so the
    /// count is never behind the calls a caller made (an absolute count from the I/O thread would overwrite
    /// the fixes still queued for it).
    func recordAcknowledged(_ count: Int) {
        guard count > 0 else { return }
        shared.withLock { $0.unacked = max(0, $0.unacked - count) }
    }

    /// Engine → delegates and streams (I/O thread, no lock held while calling out).
    func publish(_ event: ClientEvent) {
        let (delegate, mainActorDelegate, streams, finished) = shared.withLock { shared in
            if case .state(let state) = event { shared.state = state }
            let streams = Array(shared.streams.values)
            let finished = shared.state.isFinal
            if finished { shared.streams = [:] }
            return (shared.delegate, shared.mainActorDelegate, streams, finished)
        }
        if let delegate { event.deliver(to: delegate, from: self) }
        if let mainActorDelegate {
            // The main queue, not a Task: queued blocks run in the order queued, so the calls keep line order.
            DispatchQueue.main.async {
                MainActor.assumeIsolated { event.deliver(to: mainActorDelegate, from: self) }
            }
        }
        for stream in streams {
            stream.yield(event)
            if finished { stream.finish() }
        }
    }
}

extension WatchTarget {
    /// `*` is everyone, anything else a runner's name.
    public init(parsing text: String) {
        self = text == "*" ? .everyone : .runner(text)
    }
}
