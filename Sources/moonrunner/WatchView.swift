import Foundation
import MoonRunnerClient
import RunCore
import Wire

/// What a spectator's terminal shows: one block per runner (distance, time, current and average pace, a bar
/// to the next badge, badges won, the latest cheer), plus a log of happenings. Fed `ClientEvent`s; renders
/// either whole screens (for a TTY) or one plain line per happening (for pipes).
struct WatchView {
    /// One runner's latest state.
    struct Runner {
        var name: String
        var runID: Int64?
        var pace: PaceEvent?
        var badges: [BadgeEvent] = []
        var lastSplit: SplitEvent?
        var cheer: CheerEvent?
        var end: RunEndedEvent?
    }

    /// The heading's text, e.g. `watching ann`.
    var title: String
    /// `HOST:PORT`, for connection messages.
    var server: String
    /// True once the client was connected at least once (a lost connection reads differently from none).
    private(set) var hasConnected = false
    let formatter: RunFormatter
    private(set) var runners: [String: Runner] = [:]
    private(set) var order: [String] = []
    /// Recent happenings, newest last.
    private(set) var log: [String] = []
    /// Width of the progress bar in characters.
    var barWidth = 30

    init(title: String, server: String = "the server", formatter: RunFormatter = RunFormatter()) {
        self.title = title
        self.server = server
        self.formatter = formatter
    }

    /// Takes an event; returns the plain line it makes (nil for events that are only state, like `pace:`).
    @discardableResult
    mutating func apply(_ event: ClientEvent) -> String? {
        let line: String?
        switch event {
        case .runStarted(let run):
            update(run.runner) { runner in
                if runner.runID != run.runID { runner = Runner(name: run.runner) }
                runner.runID = run.runID
            }
            line = "\(run.runner) started (run \(run.runID))"
        case .pace(let pace):
            update(pace.runner) { $0.pace = pace }
            line = nil
        case .badge(let badge):
            update(badge.runner) { $0.badges.append(badge) }
            line = "\(badge.runner) won \(badgeTitle(badge)) at \(formatter.distance(badge.distance)), "
                + formatter.duration(badge.elapsed)
        case .split(let split):
            update(split.runner) { $0.lastSplit = split }
            line = "\(split.runner) \(split.unit) \(split.number) in \(formatter.duration(split.duration))"
        case .ended(let end):
            update(end.runner) { $0.end = end }
            line = endSummary(end, formatter: formatter)
        case .cheer(let cheer):
            update(cheer.runner) { $0.cheer = cheer }
            line = "\(cheer.runner) cheered by \(cheer.from): \"\(cheer.text)\""
        case .point(let point):
            line = "\(point.runner) passed \(point.name) at \(formatter.distance(point.along)), "
                + formatter.duration(point.elapsed)
        case .alert(let alert) where alert.alertKind == .sos || alert.alertKind == .batteryLow:
            line = alertLine(alert, formatter: formatter)  // what a runner's phone says that a spectator must see
        case .error(let error):
            line = "error: \(error)"
        case .state(.connected):
            hasConnected = true
            line = nil
        case .state(.waitingToReconnect(let attempt, let delay, let reason)):
            let retry = "retry \(attempt) in \(formatter.number(delay, decimals: 1)) s, Ctrl-C to stop"
            line = hasConnected ? "connection to \(server) lost: \(reason) (\(retry))"
                : "cannot connect to \(server): \(reason) (\(retry))"
        case .state(.failed(let error)):
            line = "gave up: \(error)"
        default:
            line = nil
        }
        if let line {
            log.append(line)
            if log.count > 50 { log.removeFirst(log.count - 50) }
        }
        return line
    }

    private mutating func update(_ name: String, _ change: (inout Runner) -> Void) {
        if runners[name] == nil {
            runners[name] = Runner(name: name)
            order.append(name)
        }
        change(&runners[name]!)
    }

    /// `The Moon (silver)`, or just the name for a first `earned`.
    func badgeTitle(_ badge: BadgeEvent) -> String {
        badge.tier == "earned" ? badge.badgeName : "\(badge.badgeName) (\(badge.tier))"
    }

    /// `ann 4.21 km 0:24:10 now 5:20 /km avg 5:45 /km`.
    func statusLine(_ runner: Runner) -> String {
        guard let pace = runner.pace else { return "\(runner.name) waiting for the first fix" }
        return "\(runner.name)  \(formatter.distance(pace.distance))  \(formatter.duration(pace.elapsed))  "
            + "now \(formatter.pace(pace.current))  avg \(formatter.pace(pace.pace))"
    }

    /// `[#########---------]  1.2 km until Mars`, or nil past the last badge.
    func progressLine(_ pace: PaceEvent) -> String? {
        guard let id = pace.nextBadge, let next = Badges.badge(id: id) else { return nil }
        let previous = Badges.all.last { $0.distance < next.distance }?.distance ?? 0
        let span = next.distance - previous
        let done = next.distance - pace.left
        let fraction = span > 0 ? min(max((done - previous) / span, 0), 1) : 1
        let filled = Int((fraction * Double(barWidth)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        return "[\(bar)]  \(formatter.distance(pace.left, decimals: 1)) until \(next.name)"
    }

    /// `12.4 km to go, Aid 3 in 0:12:30` for a runner on a course (`course:`), nil for one on none.
    func courseLine(_ pace: PaceEvent) -> String? {
        guard let course = pace.course else { return nil }
        var line = "\(formatter.distance(course.togo, decimals: 1)) to go"
        if let point = course.nextPoint {
            let now = Double(pace.timestamp)
            line += ", \(point)" + (course.nextPointETA.flatMap { eta in now.map { " in " + formatter.duration(max(0, eta - $0)) } } ?? "")
        }
        return line
    }

    /// The plain line for a pace update (pipes print it at most once a second per runner).
    func paceLine(_ name: String) -> String? {
        guard let runner = runners[name], let pace = runner.pace else { return nil }
        return statusLine(runner) + (progressLine(pace).map { ", \($0.split(separator: "]").last!.trimmingCharacters(in: .whitespaces))" } ?? "")
            + (courseLine(pace).map { ", " + $0 } ?? "")
    }

    /// The whole screen, `height` lines at most.
    func screen(height: Int) -> [String] {
        var lines = ["MoonRunner Live - \(title)", ""]
        if order.isEmpty { lines.append("waiting for runners...") }
        for name in order {
            guard let runner = runners[name] else { continue }
            if let end = runner.end {
                lines.append("\(name)  finished: \(endSummary(end, formatter: formatter).dropFirst(name.count + 2))")
            } else {
                lines.append(statusLine(runner))
                if let pace = runner.pace, let progress = progressLine(pace) { lines.append("    " + progress) }
                if let pace = runner.pace, let course = courseLine(pace) { lines.append("    " + course) }
            }
            if !runner.badges.isEmpty {
                // The newest four; an ellipsis and the count say there are more.
                let shown = runner.badges.suffix(4).map(badgeTitle).joined(separator: ", ")
                lines.append(runner.badges.count > 4 ? "    badges (\(runner.badges.count)): …, \(shown)"
                             : "    badges: \(shown)")
            }
            if let cheer = runner.cheer { lines.append("    cheer: \"\(cheer.text)\" from \(cheer.from)") }
            lines.append("")
        }
        let room = max(0, height - lines.count - 1)
        if room > 0, !log.isEmpty {
            lines.append("recent:")
            lines.append(contentsOf: log.suffix(max(0, room - 1)).map { "  " + $0 })
        }
        return Array(lines.prefix(height))
    }
}

/// Draws a `WatchView` on a terminal (redrawn in place with ANSI codes) or as plain lines on a pipe.
struct WatchRenderer {
    let isTerminal: Bool
    let height: Int
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var lastPaceLine: [String: ContinuousClock.Instant] = [:]

    init(isTerminal: Bool = isatty(STDOUT_FILENO) == 1) {
        self.isTerminal = isTerminal
        var size = winsize()
        height = isTerminal && ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_row > 4 ? Int(size.ws_row) : 24
    }

    /// Shows the effect of `event` (whose plain line is `line`).
    mutating func show(_ view: WatchView, after event: ClientEvent, line: String?, force: Bool = false) {
        let now = ContinuousClock.now
        if isTerminal {
            // Pace lines come many a second: redraw at most 10 times a second, anything else at once.
            var isPace = false
            if case .pace = event { isPace = true }
            guard force || !isPace || now - lastDraw >= .milliseconds(100) else { return }
            lastDraw = now
            var output = "\u{1B}[H"
            for text in view.screen(height: height - 1) { output += text + "\u{1B}[K\n" }
            output += "\u{1B}[J"
            FileHandle.standardOutput.write(Data(output.utf8))
        } else if let line {
            print(line)
            fflush(nil)
        } else if case .pace(let pace) = event,
                  now - (lastPaceLine[pace.runner] ?? now - .seconds(2)) >= .seconds(1),
                  let text = view.paceLine(pace.runner) {
            lastPaceLine[pace.runner] = now
            print(text)
            fflush(nil)
        }
    }

    /// Clears the screen before the first draw (terminals only).
    func begin() {
        if isTerminal { FileHandle.standardOutput.write(Data("\u{1B}[2J\u{1B}[H".utf8)) }
    }
}
