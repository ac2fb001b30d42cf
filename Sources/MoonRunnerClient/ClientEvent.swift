import Wire

/// Everything a client reports, typed: the same values reach the delegate and the `events()` streams.
public enum ClientEvent: Sendable, Hashable {
    /// `run:` — a run started (the client's own, or a followed runner's).
    case runStarted(RunStartedEvent)
    /// `pace:` — live measurements.
    case pace(PaceEvent)
    /// `badge:` — a badge won.
    case badge(BadgeEvent)
    /// `split:` — a kilometre or mile completed.
    case split(SplitEvent)
    /// `end:` — a run ended.
    case ended(RunEndedEvent)
    /// `msg:` — a cheer.
    case cheer(CheerEvent)
    /// `ack:` — the client's fixes up to a timestamp are stored.
    case ack(AckEvent)
    /// `note:` — why the client's fixes start no run yet (a cached position, a poor accuracy…).
    case note(NoteEvent)
    /// `alert:` — for a coach: a checkpoint passed, or a runner off (or back on) the goal's pace; for anyone
    /// following a runner: its phone's SOS, battery level or low battery (``AlertEvent/phoneAlert``).
    case alert(AlertEvent)
    /// `rank:` — for a `watch:*` spectator: a live runner's place on the leaderboard changed.
    case rank(RankEvent)
    /// `point:` — a runner on a course passed one of its points (an aid station, a km mark).
    case point(PointEvent)
    /// `ok:` — a command succeeded.
    case ok(OkEvent)
    /// `err:` from the server, or a request that failed in the client.
    case error(MoonRunnerClientError)
    /// A complete answer to `runs:`, `run:` or `badges:`.
    case history(HistoryAnswer)
    /// Any other line (`help:`, `stats:`, or a line no request claimed).
    case other(ServerEvent)
    /// The connection changed state.
    case state(ConnectionState)

    /// The typed client event for a live server event (nil for the kinds that are answers to requests).
    public init?(live event: ServerEvent) {
        switch event {
        case .runStarted(let value): self = .runStarted(value)
        case .pace(let value): self = .pace(value)
        case .badge(let value): self = .badge(value)
        case .split(let value): self = .split(value)
        case .ended(let value): self = .ended(value)
        case .cheer(let value): self = .cheer(value)
        case .ack(let value): self = .ack(value)
        case .note(let value): self = .note(value)
        case .alert(let value): self = .alert(value)
        case .rank(let value): self = .rank(value)
        case .point(let value): self = .point(value)
        case .ok(let value): self = .ok(value)
        case .error(let value): self = .error(MoonRunnerClientError(value))
        default: return nil
        }
    }
}

/// A complete history answer.
public enum HistoryAnswer: Sendable, Hashable {
    /// `runs:` — one page of a runner's runs.
    case runs(RunPage)
    /// `run:ID` — one run in detail.
    case run(RunDetails)
    /// `badges:` — a runner's badge board.
    case badges([BadgeBoardEntry])
}

/// One page of `runs:NAME OFFSET LIMIT`, newest first.
public struct RunPage: Sendable, Hashable {
    /// The runs on this page.
    public var items: [RunListItem]
    /// True when older runs remain past this page (`more=yes`).
    public var hasMore: Bool

    /// Creates a page.
    public init(items: [RunListItem], hasMore: Bool) {
        self.items = items
        self.hasMore = hasMore
    }
}

/// The answer to `run:ID`: totals, splits, checkpoints and badges of one run.
public struct RunDetails: Sendable, Hashable {
    /// The run's totals (`summary:`).
    public var summary: RunSummary
    /// Kilometre and mile splits in order of distance.
    public var splits: [SplitEvent]
    /// Stretches between badges (`checkpoint:`).
    public var checkpoints: [RunCheckpoint]
    /// Badges won in the run.
    public var badges: [BadgeEvent]

    /// Creates the details.
    public init(summary: RunSummary, splits: [SplitEvent] = [], checkpoints: [RunCheckpoint] = [],
                badges: [BadgeEvent] = []) {
        self.summary = summary
        self.splits = splits
        self.checkpoints = checkpoints
        self.badges = badges
    }

    /// Assembles the details from the lines of a `run:` answer; nil without a `summary:` line.
    public init?(lines: [ServerEvent]) {
        var summary: RunSummary?
        var splits: [SplitEvent] = []
        var checkpoints: [RunCheckpoint] = []
        var badges: [BadgeEvent] = []
        for line in lines {
            switch line {
            case .runSummary(let value): summary = value
            case .split(let value): splits.append(value)
            case .checkpoint(let value): checkpoints.append(value)
            case .badge(let value): badges.append(value)
            default: break
            }
        }
        guard let summary else { return nil }
        self.init(summary: summary, splits: splits, checkpoints: checkpoints, badges: badges)
    }
}
