import Wire

/// Called once with a request's answer lines (the final `done:`/`ok:`/`end:`/`stats:` line included) or its error.
typealias RequestCompletion = @Sendable (Result<[ServerEvent], MoonRunnerClientError>) -> Void

/// A command whose reply has not arrived yet. Replies come in the order of the commands, so the pending
/// requests form a queue and the front one owns the next reply.
struct PendingRequest: Sendable {
    /// What was sent.
    let command: Command
    /// Who waits for the answer (several `join` calls may wait for one `iam:`).
    var completions: [RequestCompletion]
    /// Answer lines collected so far (multi-line answers).
    var lines: [ServerEvent] = []
    /// True once the first answer line arrived: every line up to `done:` belongs to this request.
    var collecting = false

    init(_ command: Command, completions: [RequestCompletion] = []) {
        self.command = command
        self.completions = completions
    }

    /// The command word (`ok:WHAT` and `done:WHAT` name it).
    var word: String { command.word }

    /// True when `event` opens this request's multi-line answer.
    func isFirstAnswerLine(_ event: ServerEvent) -> Bool {
        switch (command, event) {
        case (.listRuns, .runListItem), (.showRun, .runSummary), (.showBadges, .board), (.help, .help),
             (.leaders, .leader), (.courseLeaders, .leader): return true
        default: return false
        }
    }

    /// True when an `err:` with this code answers this request rather than being a stray error (e.g. a
    /// `storage` failure of a batch of fixes, which is not a reply to any command).
    func accepts(_ code: ErrorCode) -> Bool {
        if code.isParseError { return true }
        switch command {
        // `busy`: the server's history reads (and name lookups) are full for the moment (protocol.md §8).
        case .identify: return [.wrongKey, .alreadyIdentified, .storage, .liveElsewhere, .busy].contains(code)
        case .stop: return [.notIdentified, .noRun, .storage].contains(code)
        case .cheer: return code == .notFound
        case .goal, .setPrivate, .privacyZone, .share: return code == .notIdentified
        case .unshare: return [.notIdentified, .notFound].contains(code)
        case .course: return [.notIdentified, .notFound, .storage, .busy].contains(code)
        case .listRuns, .showRun, .showBadges: return [.notFound, .storage, .busy].contains(code)
        default: return false
        }
    }

    /// Safe to send again on a new connection when the old one dropped before the answer: reads only.
    var isRepeatable: Bool {
        switch command {
        case .listRuns, .showRun, .showBadges, .ping, .help, .stats, .leaders, .courseLeaders: return true
        default: return false
        }
    }

    /// Completes every waiter.
    func complete(_ result: Result<[ServerEvent], MoonRunnerClientError>) {
        for completion in completions { completion(result) }
    }
}
