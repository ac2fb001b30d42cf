/// Any server-to-client line, typed.
public enum ServerEvent: Sendable, Hashable {
    /// `run:`
    case runStarted(RunStartedEvent)
    /// `pace:`
    case pace(PaceEvent)
    /// `badge:`
    case badge(BadgeEvent)
    /// `split:`
    case split(SplitEvent)
    /// `end:`
    case ended(RunEndedEvent)
    /// `msg:`
    case cheer(CheerEvent)
    /// `ack:`
    case ack(AckEvent)
    /// `ok:`
    case ok(OkEvent)
    /// `err:`
    case error(ErrorEvent)
    /// `item:`
    case runListItem(RunListItemEvent)
    /// `summary:`
    case runSummary(RunSummaryEvent)
    /// `checkpoint:`
    case checkpoint(CheckpointEvent)
    /// `board:`
    case board(BoardEvent)
    /// `done:`
    case done(DoneEvent)
    /// `help:`
    case help(HelpEvent)
    /// `stats:`
    case stats(StatsEvent)
    /// `note:`
    case note(NoteEvent)
    /// `alert:`
    case alert(AlertEvent)
    /// `leader:`
    case leader(LeaderEvent)
    /// `rank:`
    case rank(RankEvent)
    /// `device:`
    case device(DeviceEvent)
    /// `dropped:`
    case dropped(DroppedEvent)
    /// `point:`
    case point(PointEvent)

    /// Every event kind, in the order protocol.md lists them.
    public static let kinds: [String] = [
        RunStartedEvent.kind, PaceEvent.kind, BadgeEvent.kind, SplitEvent.kind, RunEndedEvent.kind, CheerEvent.kind,
        AckEvent.kind, OkEvent.kind, ErrorEvent.kind, RunListItemEvent.kind, RunSummaryEvent.kind,
        CheckpointEvent.kind, BoardEvent.kind, DoneEvent.kind, HelpEvent.kind, StatsEvent.kind, NoteEvent.kind,
        AlertEvent.kind, LeaderEvent.kind, RankEvent.kind, DeviceEvent.kind, DroppedEvent.kind, PointEvent.kind,
    ]

    /// Parses a line; unknown kinds are `unknown_command` errors.
    public init(line: String) throws(WireError) {
        try self.init(event: Event.parse(line))
    }

    /// Types a generic event.
    public init(event: Event) throws(WireError) {
        switch event.kind {
        case RunStartedEvent.kind: self = .runStarted(try RunStartedEvent(event: event))
        case PaceEvent.kind: self = .pace(try PaceEvent(event: event))
        case BadgeEvent.kind: self = .badge(try BadgeEvent(event: event))
        case SplitEvent.kind: self = .split(try SplitEvent(event: event))
        case RunEndedEvent.kind: self = .ended(try RunEndedEvent(event: event))
        case CheerEvent.kind: self = .cheer(try CheerEvent(event: event))
        case AckEvent.kind: self = .ack(try AckEvent(event: event))
        case OkEvent.kind: self = .ok(try OkEvent(event: event))
        case ErrorEvent.kind: self = .error(try ErrorEvent(event: event))
        case RunListItemEvent.kind: self = .runListItem(try RunListItemEvent(event: event))
        case RunSummaryEvent.kind: self = .runSummary(try RunSummaryEvent(event: event))
        case CheckpointEvent.kind: self = .checkpoint(try CheckpointEvent(event: event))
        case BoardEvent.kind: self = .board(try BoardEvent(event: event))
        case DoneEvent.kind: self = .done(try DoneEvent(event: event))
        case HelpEvent.kind: self = .help(try HelpEvent(event: event))
        case StatsEvent.kind: self = .stats(try StatsEvent(event: event))
        case NoteEvent.kind: self = .note(try NoteEvent(event: event))
        case AlertEvent.kind: self = .alert(try AlertEvent(event: event))
        case LeaderEvent.kind: self = .leader(try LeaderEvent(event: event))
        case RankEvent.kind: self = .rank(try RankEvent(event: event))
        case DeviceEvent.kind: self = .device(try DeviceEvent(event: event))
        case DroppedEvent.kind: self = .dropped(try DroppedEvent(event: event))
        case PointEvent.kind: self = .point(try PointEvent(event: event))
        default: throw WireError(.unknownCommand, "unknown event kind \(event.kind)")
        }
    }

    /// The typed event inside.
    public var payload: any WireEvent {
        switch self {
        case .runStarted(let value): return value
        case .pace(let value): return value
        case .badge(let value): return value
        case .split(let value): return value
        case .ended(let value): return value
        case .cheer(let value): return value
        case .ack(let value): return value
        case .ok(let value): return value
        case .error(let value): return value
        case .runListItem(let value): return value
        case .runSummary(let value): return value
        case .checkpoint(let value): return value
        case .board(let value): return value
        case .done(let value): return value
        case .help(let value): return value
        case .stats(let value): return value
        case .note(let value): return value
        case .alert(let value): return value
        case .leader(let value): return value
        case .rank(let value): return value
        case .device(let value): return value
        case .dropped(let value): return value
        case .point(let value): return value
        }
    }

    /// The kind word.
    public var kind: String { type(of: payload).kind }

    /// The runner the event is about, for the kinds that have one (nil for ok, err, done, help, stats, dropped).
    public var runner: String? {
        switch self {
        case .runStarted(let value): return value.runner
        case .pace(let value): return value.runner
        case .badge(let value): return value.runner
        case .split(let value): return value.runner
        case .ended(let value): return value.runner
        case .cheer(let value): return value.runner
        case .ack(let value): return value.runner
        case .runListItem(let value): return value.runner
        case .runSummary(let value): return value.runner
        case .checkpoint(let value): return value.runner
        case .board(let value): return value.runner
        case .note(let value): return value.runner
        case .alert(let value): return value.runner
        case .leader(let value): return value.runner
        case .rank(let value): return value.runner
        case .device(let value): return value.runner
        case .point(let value): return value.runner
        case .ok, .error, .done, .help, .stats, .dropped: return nil
        }
    }

    /// The generic form.
    public var event: Event { payload.event }

    /// The canonical line, without newline.
    public var line: String { payload.line }

    /// Appends the line and `\n`.
    public func append(to buffer: inout [UInt8]) {
        payload.append(to: &buffer)
    }
}
