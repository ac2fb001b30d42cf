import Foundation
import MoonRunnerClient
import Synchronization
import ToolSupport
import Wire

/// How `simulate` shows its runs between the key and the end summary.
enum SimulateProgressStyle: Sendable, Equatable {
    /// One line redrawn in place, at most `width - 1` characters (a terminal: a wrapped line cannot be redrawn).
    case liveLine(width: Int)
    /// A line per kilometre (or mile) of each runner (a pipe or a file: a redrawn line would be noise there).
    case perSplit
    /// Nothing (`--quiet`).
    case none

    /// The style for this process's standard output: a live line on a terminal, a line per split elsewhere.
    static func forStandardOutput(quiet: Bool) -> Self {
        guard !quiet else { return .none }
        guard isatty(STDOUT_FILENO) == 1 else { return .perSplit }
        var size = winsize()
        let columns = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        return .liveLine(width: columns)
    }
}

/// What `simulate` prints while its runners run: distance, time and badges, as ``SimulateProgressStyle`` says,
/// and the lines that stay (keys, end summaries) without the live line in their way.
///
/// Why: `simulate` printed the key and, minutes later, a summary; in between a new user could not tell a
/// working run from a stuck one. Every runner's task feeds the one instance, so writes are made under its lock:
/// the live line is cleared before a line that stays and drawn again after it.
final class SimulateProgress: Sendable {
    /// One runner's latest values.
    private struct Runner {
        var pace: PaceEvent?
        var badgeIDs: Set<String> = []
        var latestBadge: String?

        /// Metres so far (0 before the first `pace:`).
        var distance: Double { pace?.distance ?? 0 }
    }

    private struct State {
        var runners: [String: Runner] = [:]
        /// Runners whose run ended: their late events change nothing.
        var ended: Set<String> = []
        var lastDraw: ContinuousClock.Instant?
        var isLineShown = false
    }

    /// A live line, a line per split, or nothing.
    let style: SimulateProgressStyle
    /// Units and number formats; its unit (km or mi) is the split a piped line is printed for.
    let formatter: RunFormatter
    /// Pace lines come many a second at high speeds: the live line is redrawn at most this often for them.
    let redrawInterval: Duration
    private let write: @Sendable (String) -> Void
    private let writeError: @Sendable (String) -> Void
    private let state = Mutex(State())

    /// Progress in `style`, written with `write` (straight to standard output by default: a buffer would hold
    /// a pipe's lines back); warnings with `writeError` (standard error).
    init(style: SimulateProgressStyle, formatter: RunFormatter = RunFormatter(),
         redrawInterval: Duration = .milliseconds(100),
         write: @escaping @Sendable (String) -> Void = { FileHandle.standardOutput.write(Data($0.utf8)) },
         writeError: @escaping @Sendable (String) -> Void = { printError($0) }) {
        self.style = style
        self.formatter = formatter
        self.redrawInterval = redrawInterval
        self.write = write
        self.writeError = writeError
    }

    /// Takes one of a runner's own events (`pace:`, `badge:`, `split:`; others change nothing).
    func take(_ event: ClientEvent) {
        state.withLock { state in
            switch event {
            case .pace(let pace):
                guard !state.ended.contains(pace.runner) else { return }
                state.runners[pace.runner, default: Runner()].pace = pace
                drawLiveLine(&state, now: ContinuousClock.now, urgent: false)
            case .badge(let badge):
                guard !state.ended.contains(badge.runner) else { return }
                state.runners[badge.runner, default: Runner()].badgeIDs.insert(badge.badgeID)
                state.runners[badge.runner, default: Runner()].latestBadge = badge.badgeName
                drawLiveLine(&state, now: ContinuousClock.now, urgent: true)
            case .split(let split):
                guard style == .perSplit, split.unit == formatter.unit.rawValue,
                      !state.ended.contains(split.runner) else { return }
                let badges = badgeText(state.runners[split.runner] ?? Runner())
                write("\(split.runner): \(split.number) \(split.unit) in \(formatter.duration(split.elapsed))\(badges)\n")
            default:
                return
            }
        }
    }

    /// Prints a line that stays (a key).
    func say(_ line: String) {
        state.withLock { state in writeLasting(line, &state) }
    }

    /// Prints a warning on standard error; on a terminal both streams show, so the live line makes way.
    func warn(_ line: String) {
        state.withLock { state in
            clearLiveLine(&state)
            writeError(line)
            drawLiveLine(&state, now: ContinuousClock.now, urgent: true)
        }
    }

    /// A runner's run ended: it leaves the live line, and `summary` is printed.
    func end(_ runner: String, summary: String) {
        state.withLock { state in
            state.ended.insert(runner)
            state.runners[runner] = nil
            writeLasting(summary, &state)
        }
    }

    /// `line` on a line of its own; a live line is cleared first and drawn again after it.
    private func writeLasting(_ line: String, _ state: inout State) {
        clearLiveLine(&state)
        write(line + "\n")
        drawLiveLine(&state, now: ContinuousClock.now, urgent: true)
    }

    /// Clears the live line, if one is shown, leaving the cursor at the start of its row.
    private func clearLiveLine(_ state: inout State) {
        guard state.isLineShown else { return }
        state.isLineShown = false
        write("\r\u{1B}[K")
    }

    /// Redraws the live line (terminals only); a pace update only when the last draw is `redrawInterval` old.
    private func drawLiveLine(_ state: inout State, now: ContinuousClock.Instant, urgent: Bool) {
        guard case .liveLine(let width) = style else { return }
        guard let text = liveText(state.runners) else { return }
        if !urgent, let last = state.lastDraw, now - last < redrawInterval { return }
        state.lastDraw = now
        state.isLineShown = true
        write("\r" + String(text.prefix(max(1, width - 1))) + "\u{1B}[K")
    }

    /// `ann: 2.41 km in 0:13:15, 3 badges (latest Moon)`; with a crowd, the runner farthest on and how many run.
    private func liveText(_ runners: [String: Runner]) -> String? {
        let running = runners.filter { $0.value.pace != nil }
        // On a tie the first name, so the line does not flick from runner to runner.
        let farthest = running.max { a, b in
            a.value.distance != b.value.distance ? a.value.distance < b.value.distance : a.key > b.key
        }
        guard let farthest, let pace = farthest.value.pace else { return nil }
        let line = "\(farthest.key): \(formatter.distance(pace.distance)) in \(formatter.duration(pace.elapsed))"
            + badgeText(farthest.value)
        return running.count > 1 ? "\(running.count) running, farthest \(line)" : line
    }

    /// `, 3 badges (latest Moon)`, or nothing before the first.
    private func badgeText(_ runner: Runner) -> String {
        guard let latest = runner.latestBadge else { return "" }
        let count = runner.badgeIDs.count
        return ", \(count) \(count == 1 ? "badge" : "badges") (latest \(latest))"
    }
}
