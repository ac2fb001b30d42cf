import Foundation
import RunStore

let exportHelp = """
usage: moonrunner export RUN_ID --format gpx|geojson|svg [--db PATH] [-o FILE]

Writes a stored run (its accepted fixes, badges and splits) to stdout or FILE:
  gpx       GPX 1.1 track with times and accuracy (<moonrunner:accuracy> extension), badges as waypoints
  geojson   FeatureCollection: route segments coloured by pace, badge points, km split points
  svg       a picture of the route coloured by pace with badge markers and a legend

  --format F    gpx, geojson or svg (default gpx)
  --db PATH     SQLite file (default moonrunner.sqlite)
  -o FILE       write to FILE instead of stdout
"""

/// `moonrunner export RUN_ID …` (`arguments` are the words after `export`).
func runExportCommand(arguments: [String]) -> Int32 {
    let runID: Int64
    let format: String
    let path: String
    let output: String?
    do {
        var options = try Options(arguments)
        if options.wantsHelp {
            print(exportHelp)
            return 0
        }
        format = (options.string("format") ?? "gpx").lowercased()
        path = options.string("db") ?? StoreDefaults.path
        output = options.string("o", alias: "output")
        try options.finish()
        guard options.positional.count == 1, let id = Int64(options.positional[0]) else {
            throw Options.UsageError(description: "give exactly one run id (a number)")
        }
        guard ["gpx", "geojson", "svg"].contains(format) else {
            throw Options.UsageError(description: "--format must be gpx, geojson or svg, not \(format)")
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
    do {
        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        guard let run = try store.run(id: runID) else {
            printError("moonrunner export: there is no run \(runID) in \(path)")
            return 1
        }
        let fixes = try store.fixes(ofRun: runID)
        let text: String
        switch format {
        case "geojson": text = RunExport.geoJSON(run, fixes: fixes)
        case "svg": text = RunExport.svg(run, fixes: fixes)
        default: text = RunExport.gpx(run, fixes: fixes)
        }
        if let output {
            try Data(text.utf8).write(to: URL(fileURLWithPath: output))
        } else {
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        return 0
    } catch {
        printError("moonrunner export: \(error)")
        return 1
    }
}
