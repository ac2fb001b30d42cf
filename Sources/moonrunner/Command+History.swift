import ToolSupport
import Foundation
import MoonRunnerClient
import Wire

let runsHelp = """
usage: moonrunner runs NAME [options]

A runner's runs, newest first, as a table (from a running server).

  --host ADDR      server address (default 127.0.0.1)
  --port N         server port (default 4242)
  --offset N       skip the N newest runs (default 0)
  --limit N        at most N runs, 1-100 (default 20)
  --units km|mi    distance unit (default from the locale)
"""

let badgesHelp = """
usage: moonrunner badges NAME [options]

A runner's badge board as a table: when each badge was earned, silver and gold, the best pace there, the
distance still missing, and the paces that would win silver and gold next time.

  --host ADDR      server address (default 127.0.0.1)
  --port N         server port (default 4242)
  --units km|mi    distance unit (default from the locale)
"""

/// A client for one-shot history questions: a few quick reconnect attempts, then a clear failure.
private func historyClient(host: String, port: UInt16) -> MoonRunnerClient {
    MoonRunnerClient(configuration: ClientConfiguration(host: host, port: port,
                                                        reconnect: ReconnectPolicy(initialDelay: 0.1, maximumAttempts: 3)))
}

/// `moonrunner runs NAME`.
func runRunsCommand(arguments: [String]) -> Int32 {
    runHistoryQuestion("runs", arguments: arguments, help: runsHelp) { options in
        (offset: try options.number("offset", default: 0),
         limit: try options.number("limit", default: Command.Limits.defaultRunsLimit))
    } ask: { client, name, page, formatter in
        runsTable(try await client.runs(of: name, offset: page.offset, limit: page.limit), formatter: formatter)
    }
}

/// Asks a running server one history question about one runner and prints the answer: `runs` and `badges` read
/// the same options (the server, `--units`, one NAME), besides those `readOwn` reads, and fail the same way
/// (exit status 2 after a usage error, with the command's help; 1 when the question cannot be answered).
private func runHistoryQuestion<Own: Sendable>(
    _ command: String, arguments: [String], help: String,
    readOwn: (inout Options) throws -> Own,
    ask: @escaping @Sendable (MoonRunnerClient, String, Own, RunFormatter) async throws -> String
) -> Int32 {
    let host: String, port: UInt16, own: Own, name: String, formatter: RunFormatter
    do {
        var options = try Options(arguments)
        if options.wantsHelp {
            print(help)
            return 0
        }
        (host, port) = try options.serverAddress()
        own = try readOwn(&options)
        formatter = try unitFormatter(options.string("units"))
        try options.finish()
        guard options.positional.count == 1 else { throw Options.UsageError(description: "give one runner NAME") }
        name = options.positional[0]
    } catch {
        printError("moonrunner \(command): \(error)\n\n\(help)")
        return 2
    }
    return runBlocking {
        let client = historyClient(host: host, port: port)
        defer { client.close() }
        do {
            print(try await ask(client, name, own, formatter))
            return 0
        } catch {
            printError("moonrunner \(command): \(error)")
            return 1
        }
    }
}

/// The runs as an aligned table (numbers right-aligned), with a hint when more remain.
func runsTable(_ page: RunPage, formatter: RunFormatter) -> String {
    var rows = [["RUN", "DATE (\(formatter.timeZoneLabel))", "DISTANCE", "TIME", "PACE"]]
    for item in page.items {
        rows.append([String(item.runID), formatter.date(item.date), formatter.distance(item.distance),
                     formatter.duration(item.elapsed), formatter.pace(item.pace)])
    }
    var text = alignedTable(rows, rightAligned: [0, 2, 3, 4])
    if page.items.isEmpty { text += "\n(no runs)" }
    if page.hasMore { text += "\n(more: use --offset \(page.items.count))" }
    return text
}

/// `moonrunner badges NAME`.
func runBadgesCommand(arguments: [String]) -> Int32 {
    runHistoryQuestion("badges", arguments: arguments, help: badgesHelp) { _ in } ask: { client, name, _, formatter in
        boardTable(try await client.badges(of: name), formatter: formatter)
    }
}

/// The badge board as an aligned table; the last column says what is left to win at each badge.
func boardTable(_ board: [BoardEvent], formatter: RunFormatter) -> String {
    let zone = formatter.timeZoneLabel
    var rows = [["BADGE", "DISTANCE", "EARNED (\(zone))", "SILVER", "GOLD", "BEST", "TO WIN"]]
    for badge in board {
        rows.append([badge.badgeName, formatter.distance(badge.distance),
                     badge.earned.map(formatter.date) ?? "-", badge.silver.map(formatter.date) ?? "-",
                     badge.gold.map(formatter.date) ?? "-",
                     badge.best == nil ? "-" : formatter.pace(badge.best), leftToWin(badge, formatter: formatter)])
    }
    return alignedTable(rows, rightAligned: [1, 5])
}

/// `1.20 km more to earn it`, `silver at 5:03 /km, gold at 4:49 /km`, `gold at 4:49 /km`, or `all won`.
func leftToWin(_ badge: BoardEvent, formatter: RunFormatter) -> String {
    guard badge.earned != nil else {
        return badge.left > 0 ? "\(formatter.distance(badge.left)) more to earn it" : "-"
    }
    var goals: [String] = []
    if badge.silver == nil, let pace = badge.silverPace { goals.append("silver at \(formatter.pace(pace))") }
    if badge.gold == nil, let pace = badge.goldPace { goals.append("gold at \(formatter.pace(pace))") }
    return goals.isEmpty ? "all won" : goals.joined(separator: ", ")
}

/// Rows padded to their columns' widths (in characters), two spaces apart.
func alignedTable(_ rows: [[String]], rightAligned: Set<Int>) -> String {
    let columns = rows.map(\.count).max() ?? 0
    let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { column, cell in
            let padding = String(repeating: " ", count: widths[column] - cell.count)
            return rightAligned.contains(column) ? padding + cell : cell + padding
        }.joined(separator: "  ")
    }.map { line in String(line.reversed().drop { $0 == " " }.reversed()) }.joined(separator: "\n")  // no trailing spaces
}
