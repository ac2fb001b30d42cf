import ToolSupport
import Foundation
import RunStore

let exportHelp = """
usage: moonrunner export RUN_ID [--format gpx|tcx|geojson|svg] [--db PATH] [-o FILE]

Writes a stored run (its accepted fixes, badges and splits) to stdout or FILE:
  gpx       GPX 1.1: a track segment per stretch between pauses, each point's time and accuracy
            (<moonrunner:accuracy> extension), badges as waypoints
  tcx       Garmin Training Center v2: one activity, a lap per km, a track per stretch between pauses
  geojson   FeatureCollection: route segments coloured by pace, badge points, km split points
  svg       a picture of the route coloured by pace with badge markers and a legend
GPX and TCX exports import again as the same run (same distance, splits and badges).

  --format F          gpx, tcx, geojson or svg (default gpx)
  --db PATH           SQLite file (default moonrunner.sqlite)
  -o, --output FILE   write to FILE instead of stdout
"""

/// `moonrunner export RUN_ID …` (`arguments` are the words after `export`).
func runExportCommand(arguments: [String]) -> Int32 {
    // Help wins over everything else on the line, and does nothing else.
    if arguments.contains("--help") || arguments.contains("-h") {
        print(exportHelp)
        return 0
    }
    let runID: Int64
    let format: String
    let path: String
    let output: String?
    do {
        if let unknown = Options.firstUnknownOption(in: arguments, values: ["format", "db", "o", "output"]) {
            throw Options.UsageError(description: "unknown option '\(unknown)'")
        }
        var options = try Options(arguments)
        format = (options.string("format") ?? "gpx").lowercased()
        path = options.string("db") ?? StoreDefaults.path
        output = options.string("o", alias: "output")
        try options.finish()
        guard options.positional.count == 1, let id = Int64(options.positional[0]) else {
            throw Options.UsageError(description: "give exactly one run id (a number)")
        }
        guard ["gpx", "tcx", "geojson", "svg"].contains(format) else {
            throw Options.UsageError(description: "--format must be gpx, tcx, geojson or svg, not \(format)")
        }
        runID = id
    } catch {
        printError("moonrunner export: \(error)\n\n\(exportHelp)")
        return 2
    }
    // Opening would create an empty database; a missing file is a mistake worth naming.
    guard path.hasPrefix("file:") || FileManager.default.fileExists(atPath: path) else {
        printError("moonrunner export: no database at \(path) (use --db PATH)")
        return 1
    }
    // Writing the export over the database (or its write-ahead log) would destroy every run in it.
    if let output, [path, path + "-wal", path + "-shm"].contains(where: { FileAccess.isSameFile(output, $0) }) {
        printError("moonrunner export: \(output) is the database itself: give another file with -o")
        return 1
    }
    do {
        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        guard let run = try store.run(id: runID) else {
            printError("moonrunner export: there is no run \(runID) in \(path)")
            return 1
        }
        let fixes = try store.fixesInTimeOrder(ofRun: runID)
        let source = try store.importRecord(ofRun: runID)
        let text: String
        switch format {
        case "geojson": text = RunExport.geoJSON(run, fixes: fixes, source: source)
        case "svg": text = RunExport.svg(run, fixes: fixes, source: source)
        case "tcx": text = RunExport.tcx(run, fixes: fixes, source: source)
        default: text = RunExport.gpx(run, fixes: fixes, source: source)
        }
        if let output {
            try FileAccess.write(Data(text.utf8), to: output)
        } else {
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        return 0
    } catch {
        printError("moonrunner export: \(error)")
        return 1
    }
}
