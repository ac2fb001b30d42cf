import Wire

/// History and housekeeping requests: each sends one command and collects its answer up to `done:`.
extension MoonRunnerClient {
    /// A page of the runner's runs, newest first (`runs:NAME OFFSET LIMIT`; limit 1...100).
    /// Throws `.server(code: .notFound, …)` for an unknown runner.
    public func runs(of runner: String, offset: Int = 0,
                     limit: Int = Command.Limits.defaultRunsLimit) async throws(MoonRunnerClientError) -> RunPage {
        guard Command.isValidName(runner) else { throw .invalidArgument("a name is 1-32 of A-Z a-z 0-9 _ . -") }
        guard offset >= 0, (1...Command.Limits.maximumRunsLimit).contains(limit) else {
            throw .invalidArgument("offset must be 0 or more and limit 1-\(Command.Limits.maximumRunsLimit)")
        }
        let command = Command.listRuns(name: runner, offset: offset, limit: limit)
        guard case .runs(let page) = HistoryAnswer(command: command, lines: try await request(command)) else {
            throw .connectionLost
        }
        return page
    }

    /// One run in detail: summary, splits, checkpoints and badges (`run:ID`).
    public func run(id: Int64) async throws(MoonRunnerClientError) -> RunDetails {
        guard id > 0 else { throw .invalidArgument("a run id is a positive whole number") }
        let command = Command.showRun(id: id)
        guard case .run(let details) = HistoryAnswer(command: command, lines: try await request(command)) else {
            throw .connectionLost
        }
        return details
    }

    /// The runner's badge board, one entry per badge in order of distance (`badges:NAME`).
    public func badges(of runner: String) async throws(MoonRunnerClientError) -> [BadgeBoardEntry] {
        guard Command.isValidName(runner) else { throw .invalidArgument("a name is 1-32 of A-Z a-z 0-9 _ . -") }
        let command = Command.showBadges(name: runner)
        guard case .badges(let board) = HistoryAnswer(command: command, lines: try await request(command)) else {
            throw .connectionLost
        }
        return board
    }

    /// Round trip to the server (`ping:` → `ok:ping`).
    public func ping() async throws(MoonRunnerClientError) {
        _ = try await request(.ping)
    }

    /// The server's counters (`stats:`).
    public func statistics() async throws(MoonRunnerClientError) -> StatsEvent {
        for case .stats(let stats) in try await request(.stats) { return stats }
        throw .connectionLost
    }
}
