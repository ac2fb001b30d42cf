import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing

/// `moonrunner import` then `moonrunner export` as a person runs them: a real GPX file in, three formats out.
@Suite(.mayBlock) struct ExportCommandTests {
    static let fixtures = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    /// Imports the real Strava run and returns the database path and the run id.
    func importRealRun() throws -> (String, Int64) {
        let database = temporaryFolder().appendingPathComponent("import.sqlite").path
        let gpx = Self.fixtures.appendingPathComponent("strava-run-1.gpx").path
        let importer = try ChildProcess(["import", gpx, "--runner", "ann", "--db", database])
        #expect(importer.awaitExit() == 0, "\(importer.standardError)")
        let store = try SQLiteRunStore(path: database)
        defer { store.close() }
        let run = try #require(try store.runs(of: "ann", offset: 0, limit: 1).first)
        #expect(run.status == .saved && run.distance > 8000)
        return (database, run.id)
    }

    @Test func gpxExportIsValidAgainstTheSchemaAndKeepsEveryAcceptedFix() throws {
        let (database, runID) = try importRealRun()
        let output = temporaryFolder().appendingPathComponent("run.gpx")
        let exporter = try ChildProcess(["export", String(runID), "--format", "gpx", "--db", database, "-o", output.path])
        #expect(exporter.awaitExit() == 0, "\(exporter.standardError)")
        let text = try String(contentsOf: output, encoding: .utf8)
        let store = try SQLiteRunStore(path: database)
        defer { store.close() }
        let accepted = try store.fixes(ofRun: runID).filter { $0.rejection == nil }.count
        #expect(text.components(separatedBy: "<trkpt ").count - 1 == accepted)
        let schema = Self.fixtures.appendingPathComponent("gpx-1.1.xsd").path
        if let status = try xmllintStatus(["--noout", "--schema", schema, output.path]) {
            #expect(status == 0, "the export validates against GPX 1.1")
        }
    }

    @Test func geoJSONAndSVGExportsParse() throws {
        let (database, runID) = try importRealRun()
        let geo = try ChildProcess(["export", String(runID), "--format", "geojson", "--db", database])
        #expect(geo.awaitExit() == 0)
        let json = try JSONSerialization.jsonObject(with: Data(geo.standardOutput.utf8)) as? [String: Any]
        #expect(json?["type"] as? String == "FeatureCollection")
        let features = json?["features"] as? [[String: Any]] ?? []
        let strokes = features.compactMap { ($0["properties"] as? [String: Any])?["stroke"] as? String }
        #expect(strokes.count > 100 && strokes.allSatisfy { $0.hasPrefix("#") && $0.count == 7 })

        let picture = temporaryFolder().appendingPathComponent("run.svg")
        let svg = try ChildProcess(["export", String(runID), "--format", "svg", "--db", database, "-o", picture.path])
        #expect(svg.awaitExit() == 0)
        if let status = try xmllintStatus(["--noout", picture.path]) { #expect(status == 0, "the SVG is well-formed XML") }
        #expect(try String(contentsOf: picture, encoding: .utf8).contains("<svg"))
    }


    @Test func theDatabaseIsNeverWrittenOver() throws {
        let (database, runID) = try importRealRun()
        // The same file under another spelling, and its write-ahead log, are refused too.
        let other = URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent(".").path
        for output in [database, other + "/import.sqlite"] {
            let exporter = try ChildProcess(["export", String(runID), "--db", database, "-o", output])
            #expect(exporter.awaitExit() == 1)
            #expect(exporter.standardError.contains("is the database itself"), "\(exporter.standardError)")
        }
        let store = try SQLiteRunStore(path: database)
        defer { store.close() }
        #expect(try store.run(id: runID) != nil, "the runs are still there")
    }

    @Test func anUnknownRunIsAClearError() throws {
        let (database, _) = try importRealRun()
        let exporter = try ChildProcess(["export", "999999", "--format", "gpx", "--db", database])
        #expect(exporter.awaitExit() == 1)
        #expect(!exporter.standardError.isEmpty)
    }
}

/// Runs xmllint (Debian's libxml2-utils, which .ci/run installs) and returns its exit status; nil where it is not
/// installed (a fresh machine: the schema checks are skipped, said once on stderr), except under `CI=true`,
/// where a missing xmllint fails the test.
func xmllintStatus(_ arguments: [String]) throws -> Int32? {
    let path = "/usr/bin/xmllint"
    guard FileManager.default.isExecutableFile(atPath: path) else {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("xmllint missing: .ci/run installs libxml2-utils")
        } else {
            _ = xmllintSkipNotice
        }
        return nil
    }
    return try runProgram(path, arguments)
}

/// Said once per test run, the first time a schema check is skipped.
private let xmllintSkipNotice: Void = {
    FileHandle.standardError.write(Data("Schema checks of exports skipped: no /usr/bin/xmllint (apt-get install libxml2-utils)\n".utf8))
}()
