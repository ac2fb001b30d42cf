import Foundation
import RunCore
import RunStore

let importHelp = """
usage: moonrunner import FILE.gpx --runner NAME [--db PATH]

Loads each track of a GPX 1.0/1.1 file as a saved run of NAME, through the same engine as a live run
(filtering, smoothing, splits, badges; the clock is each point's own time). Stores every point, accepted or
filtered, the awards and the runner's badge history, then prints the run id and a summary. A runner that
does not exist yet is created and its new key is printed once (only its hash is stored).

  --runner NAME   the runner the run belongs to
  --db PATH       SQLite file (default moonrunner.sqlite; created if missing)
"""

/// `moonrunner import FILE --runner NAME …` (`arguments` are the words after `import`).
func runImportCommand(arguments: [String]) -> Int32 {
    let file: String
    let runner: String
    let path: String
    do {
        var options = try Options(arguments)
        if options.wantsHelp {
            print(importHelp)
            return 0
        }
        path = options.string("db") ?? StoreDefaults.path
        guard let name = options.string("runner"), !name.isEmpty else {
            throw Options.UsageError(description: "--runner NAME is required")
        }
        runner = name
        try options.finish()
        guard options.positional.count == 1 else { throw Options.UsageError(description: "give exactly one GPX file") }
        file = options.positional[0]
    } catch {
        printError("moonrunner import: \(error)\n\n\(importHelp)")
        return 2
    }
    let tracks: [[Fix]]
    do {
        tracks = try GPXImport.tracks(from: Data(contentsOf: URL(fileURLWithPath: file)))
    } catch {
        printError("moonrunner import: \(file): \(error)")
        return 1
    }
    guard !tracks.isEmpty else {
        printError("moonrunner import: \(file) has no track points")
        return 1
    }
    do {
        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        for track in tracks {
            let outcome = try RunImport.importRun(track, runner: runner, into: store,
                                                  now: Date().timeIntervalSince1970)
            if let key = outcome.newRunnerKey {
                print("created runner \(runner); key (shown once, keep it): \(key)")
            }
            print(importSummary(outcome, points: track.count))
        }
        return 0
    } catch {
        printError("moonrunner import: \(error)")
        return 1
    }
}

/// The lines printed for one imported run.
private func importSummary(_ outcome: RunImport.Outcome, points: Int) -> String {
    let record = outcome.record
    func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 3600 ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%d:%02d", total / 60, total % 60)
    }
    var lines = [
        "run \(outcome.runID) saved for \(record.runner)",
        String(format: "  distance   %.2f km", record.distance / 1000),
        "  elapsed    \(clock(record.elapsed))   moving \(clock(record.movingTime))",
        "  pace       \(record.averagePace.map { "\(clock($0)) /km" } ?? "–")",
    ]
    let filtered = record.rejections.sorted { $0.key.rawValue < $1.key.rawValue }
        .map { "\($0.key.rawValue) \($0.value)" }
    lines.append("  points     \(points) (\(filtered.isEmpty ? "none filtered" : "filtered: " + filtered.joined(separator: ", ")))")
    let kilometres = outcome.summary.splits.filter { $0.unit == .kilometre }
    if !kilometres.isEmpty {
        lines.append("  km splits  " + kilometres.map { clock($0.duration) }.joined(separator: " "))
    }
    for award in outcome.summary.awards {
        lines.append("  badge      \(award.badge.name) (\(award.tier.rawValue)) at \(clock(award.elapsed))")
    }
    return lines.joined(separator: "\n")
}
