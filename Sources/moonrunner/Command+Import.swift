import ToolSupport
import Foundation
import RunCore
import RunStore
import Wire

let importHelp = """
usage: moonrunner import FILE... --runner NAME [--db PATH]

Loads every activity of each GPX (1.0/1.1) or TCX (Garmin Training Center v2) file as a saved run of NAME;
the format is told by the content, not the file name. Runs go through the same engine as a live run
(filtering, smoothing, splits, badges; the clock is each point's own time), and a new <trkseg> (GPX) or a
second <Track> in a lap (TCX) is a pause: no distance or moving time across it. So is a silence in the
recording crossed at walking pace or slower (a watch on auto-pause); one crossed at running pace (a
tunnel) is run. A TCX multisport session's legs are runs of their own. Elapsed time runs from the first
recorded point to the last, even when the filter refuses the first. Points without a position
or a time are skipped and counted. Every point is stored, accepted or filtered, with the awards, the
runner's badge history and, for TCX, the device's own distance. A file already imported for NAME (same
start time and point count) is not imported again. A file that cannot be read is reported and the others
still import; the exit status is then 1.

A runner that does not exist yet is created and its new key is printed once (only its hash is stored).

  --runner NAME   the runner the runs belong to
  --db PATH       SQLite file (default moonrunner.sqlite; created if missing)
"""

/// `moonrunner import FILE… --runner NAME …` (`arguments` are the words after `import`).
func runImportCommand(arguments: [String]) -> Int32 {
    // Help wins over everything else on the line, and does nothing else.
    if arguments.contains("--help") || arguments.contains("-h") {
        print(importHelp)
        return 0
    }
    let files: [String]
    let runner: String
    let path: String
    do {
        if let unknown = Options.firstUnknownOption(in: arguments, values: ["runner", "db"]) {
            throw Options.UsageError(description: "unknown option '\(unknown)'")
        }
        var options = try Options(arguments)
        path = options.string("db") ?? StoreDefaults.path
        let name = options.string("runner")
        try options.finish()
        guard let name, !name.isEmpty else { throw Options.UsageError(description: "--runner NAME is required") }
        guard !options.positional.isEmpty else { throw Options.UsageError(description: "give at least one GPX or TCX file") }
        runner = name
        files = options.positional
    } catch {
        printError("moonrunner import: \(error)\n\n\(importHelp)")
        return 2
    }
    return withStore(for: "import", { () throws(StoreError) in try SQLiteRunStore(path: path) }) { store in
        var tally = ImportTally()
        for (index, file) in files.enumerated() {
            let label = files.count > 1 ? "[\(index + 1)/\(files.count)] \(file)" : file
            do {
                let data = try FileAccess.read(file)
                let (format, results) = try RunImport.importFile(data, runner: runner, into: store,
                                                                 now: Date().timeIntervalSince1970)
                guard !results.isEmpty else {
                    throw StoreError.invalidInput("no track points")
                }
                print("\(label): \(format.rawValue.uppercased()), \(results.count) "
                    + (results.count == 1 ? "activity" : "activities"))
                for result in results {
                    switch result {
                    case .imported(let outcome, let activity):
                        if let key = outcome.newRunnerKey {
                            print("created runner \(runner); key (shown once, keep it): \(key)")
                        }
                        print(importSummary(outcome, activity: activity))
                        tally.imported += 1
                    case .alreadyImported(let runID, let activity):
                        print("  already imported as run \(runID) (same runner, start "
                            + "\(ISODate.string(unixSeconds: activity.firstPointTime ?? 0)) "
                            + "and \(activity.pointCount) points): skipped")
                        tally.duplicates += 1
                    }
                }
            } catch let problem as FileAccess.Problem {
                printError("moonrunner import: \(problem)")
                tally.failed += 1
            } catch {
                // The file's name and the reason (with the line, for a file that is not valid XML or GPX/TCX).
                printError("moonrunner import: \(file): \(error)")
                tally.failed += 1
            }
        }
        if files.count > 1 { print(tally.line(files: files.count)) }
        return tally.failed == 0 ? 0 : 1
    }
}

/// What a multi-file import came to.
private struct ImportTally {
    var imported = 0, duplicates = 0, failed = 0

    /// "total: 3 runs imported, 1 already imported, 1 file failed (5 files)".
    func line(files: Int) -> String {
        var parts = ["\(imported) \(imported == 1 ? "run" : "runs") imported"]
        if duplicates > 0 { parts.append("\(duplicates) already imported") }
        if failed > 0 { parts.append("\(failed) \(failed == 1 ? "file" : "files") failed") }
        return "total: " + parts.joined(separator: ", ") + " (\(files) \(files == 1 ? "file" : "files"))"
    }
}

/// `h:mm:ss`, as everywhere in the command line's summaries.
private func clock(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds >= 0 else { return "–" }
    let total = Int(seconds.rounded())
    return String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
}

/// The lines printed for one imported run.
private func importSummary(_ outcome: RunImport.Outcome, activity: ImportedActivity) -> String {
    let record = outcome.record
    var distance = String(format: "  distance   %.2f km", record.distance / 1000)
    if let device = activity.deviceDistance {
        distance += String(format: " (device %.2f km)", device / 1000)
    }
    var lines = [
        "  run \(outcome.runID) saved for \(record.runner)" + (activity.name.map { ": \($0)" } ?? "")
            + (activity.sport.map { " (\($0))" } ?? ""),
        distance,
        "  elapsed    \(clock(record.elapsed))   moving \(clock(record.movingTime))",
        "  pace       \(record.averagePace.map { "\(clock($0)) /km" } ?? "–")",
    ]
    if let gain = record.elevationGain, let loss = record.elevationLoss {
        lines.append(String(format: "  elevation  +%.0f m  -%.0f m", gain, loss))
    }
    let filtered = record.rejections.sorted { $0.key.rawValue < $1.key.rawValue }
        .map { "\($0.key.rawValue) \($0.value)" }
    var points = "  points     \(activity.pointCount) (\(filtered.isEmpty ? "none filtered" : "filtered: " + filtered.joined(separator: ", "))"
    if activity.pointsWithoutPosition > 0 { points += "; skipped \(activity.pointsWithoutPosition) without a position" }
    if activity.pointsWithoutTime > 0 { points += "; skipped \(activity.pointsWithoutTime) without a time" }
    lines.append(points + ")")
    if let rejection = outcome.firstPointRejection {
        lines.append("  start      the first point was filtered (\(rejection.rawValue)): the clock starts at it, "
            + "the distance at the first point kept")
    }
    let filePauses = activity.segments.count - 1, gapPauses = outcome.pausesInGaps
    if filePauses + gapPauses > 0 {
        var parts: [String] = []
        if filePauses > 0 { parts.append("\(filePauses) in the file") }
        if gapPauses > 0 { parts.append("\(gapPauses) where the recording stopped at walking pace or slower") }
        lines.append("  pauses     \(filePauses + gapPauses) (" + parts.joined(separator: ", ") + ")")
    }
    // One split a line, numbers right-aligned: a marathon's 42 on one line ran far past the terminal's edge.
    let kilometres = outcome.summary.splits.filter { $0.unit == .kilometre }
    let numberWidth = String(kilometres.last?.number ?? 0).count
    for split in kilometres {
        let number = String(split.number)
        let label = "  km " + String(repeating: " ", count: numberWidth - number.count) + number
        lines.append(label.padding(toLength: 13, withPad: " ", startingAt: 0)
            + "\(clock(split.duration))   at \(clock(split.elapsed))")
    }
    for award in outcome.summary.awards {
        lines.append("  badge      \(award.badge.name) (\(award.tier.rawValue)) at \(clock(award.elapsed))")
    }
    return lines.joined(separator: "\n")
}
