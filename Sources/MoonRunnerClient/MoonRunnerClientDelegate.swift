import Wire

/// Receives a client's events on the client I/O thread, one method per kind (every method has an empty
/// default). For app code on the main actor, use `MoonRunnerClientMainActorDelegate` instead.
///
/// **Threading.** Methods are called on the client I/O thread (Linux: the Reactor loop thread the clients of a
/// process share; Apple platforms: the clients' run-loop thread), one at a time and in the order the lines
/// arrived. Return quickly and hop to your own queue or actor for real work; a delegate that blocks delays
/// every client of the process. The delegate is `Sendable` because it is called from that thread: keep its
/// mutable state behind a lock (or use the main-actor delegate, whose state the main actor guards).
public protocol MoonRunnerClientDelegate: AnyObject, Sendable {
    /// A run started.
    func client(_ client: MoonRunnerClient, didStartRun event: RunStartedEvent)
    /// Live measurements after an accepted fix.
    func client(_ client: MoonRunnerClient, didReceivePace event: PaceEvent)
    /// A badge was won.
    func client(_ client: MoonRunnerClient, didWinBadge event: BadgeEvent)
    /// A kilometre or mile was completed.
    func client(_ client: MoonRunnerClient, didCompleteSplit event: SplitEvent)
    /// A run ended.
    func client(_ client: MoonRunnerClient, didEndRun event: RunEndedEvent)
    /// A cheer arrived.
    func client(_ client: MoonRunnerClient, didReceiveCheer event: CheerEvent)
    /// The client's fixes up to `event.timestamp` are stored.
    func client(_ client: MoonRunnerClient, didReceiveAck event: AckEvent)
    /// The server explained why the client's fixes start no run yet (`note:`).
    func client(_ client: MoonRunnerClient, didReceiveNote event: NoteEvent)
    /// An alert (`alert:`): for a coach, a checkpoint passed, or a runner off (or back on) the goal's pace; for
    /// anyone following a runner, its phone's SOS, battery level or low battery (``AlertEvent/phoneAlert``).
    func client(_ client: MoonRunnerClient, didReceiveAlert event: AlertEvent)
    /// A live runner's place on the leaderboard changed (`rank:`, for `watch:*`).
    func client(_ client: MoonRunnerClient, didReceiveRank event: RankEvent)
    /// A runner on a course passed one of its points (`point:`).
    func client(_ client: MoonRunnerClient, didPassPoint event: PointEvent)
    /// A command succeeded.
    func client(_ client: MoonRunnerClient, didReceiveOK event: OkEvent)
    /// The server sent `err:`, or a request failed.
    func client(_ client: MoonRunnerClient, didFailWith error: MoonRunnerClientError)
    /// A history answer is complete.
    func client(_ client: MoonRunnerClient, didReceiveHistory answer: HistoryAnswer)
    /// Another line (`help:`, `stats:`, unclaimed answers).
    func client(_ client: MoonRunnerClient, didReceive event: ServerEvent)
    /// The connection changed state.
    func client(_ client: MoonRunnerClient, didChangeState state: ConnectionState)
}

extension MoonRunnerClientDelegate {
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didStartRun event: RunStartedEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceivePace event: PaceEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didWinBadge event: BadgeEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didCompleteSplit event: SplitEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didEndRun event: RunEndedEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceiveCheer event: CheerEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceiveAck event: AckEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceiveNote event: NoteEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceiveAlert event: AlertEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceiveRank event: RankEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didPassPoint event: PointEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceiveOK event: OkEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didFailWith error: MoonRunnerClientError) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceiveHistory answer: HistoryAnswer) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didReceive event: ServerEvent) {}
    /// Does nothing.
    public func client(_ client: MoonRunnerClient, didChangeState state: ConnectionState) {}
}

extension ClientEvent {
    /// Calls the delegate method for this event.
    func deliver(to delegate: any MoonRunnerClientDelegate, from client: MoonRunnerClient) {
        switch self {
        case .runStarted(let value): delegate.client(client, didStartRun: value)
        case .pace(let value): delegate.client(client, didReceivePace: value)
        case .badge(let value): delegate.client(client, didWinBadge: value)
        case .split(let value): delegate.client(client, didCompleteSplit: value)
        case .ended(let value): delegate.client(client, didEndRun: value)
        case .cheer(let value): delegate.client(client, didReceiveCheer: value)
        case .ack(let value): delegate.client(client, didReceiveAck: value)
        case .note(let value): delegate.client(client, didReceiveNote: value)
        case .alert(let value): delegate.client(client, didReceiveAlert: value)
        case .rank(let value): delegate.client(client, didReceiveRank: value)
        case .point(let value): delegate.client(client, didPassPoint: value)
        case .ok(let value): delegate.client(client, didReceiveOK: value)
        case .error(let value): delegate.client(client, didFailWith: value)
        case .history(let value): delegate.client(client, didReceiveHistory: value)
        case .other(let value): delegate.client(client, didReceive: value)
        case .state(let value): delegate.client(client, didChangeState: value)
        }
    }
}
