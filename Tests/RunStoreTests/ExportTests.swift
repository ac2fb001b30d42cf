import Foundation
import RunCore
import MoonRunnerTestSupport
import Testing
@testable import RunStore

/// Runs `xmllint` with these arguments; nil when xmllint is not installed.
func xmllint(_ arguments: [String]) throws -> (status: Int32, output: String)? {
    guard let executable = ["/usr/bin/xmllint", "/usr/local/bin/xmllint"].first(where: {
        FileManager.default.isExecutableFile(atPath: $0)
    }) else { return nil }
    // posix_spawn, not Foundation's Process (which crashes now and then on Linux: see ChildProcess).
    let child = try ChildProcess(executable: executable, arguments: arguments)
    let status = child.awaitExit(timeout: 60)
    return (status, child.standardOutput + child.standardError)
}

/// Checks `text` with xmllint: against `schema` when given, else only for well-formedness.
func expectValidXML(_ text: String, schema: URL? = nil, in directory: TemporaryDirectory,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
    let file = directory.path("document-\(UUID().uuidString).xml")
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    let arguments = ["--noout"] + (schema.map { ["--schema", $0.path] } ?? []) + [file]
    guard let result = try xmllint(arguments) else {
        print("SKIPPED xmllint check: xmllint is not installed (apt-get install libxml2-utils)")
        return
    }
    #expect(result.status == 0, "xmllint: \(result.output)", sourceLocation: sourceLocation)
}

/// A real run imported through the engine into a memory store.
struct ImportedRun {
    let store = MemoryRunStore()
    let run: StoredRun
    let fixes: [StoredFix]
    let track: [Fix]

    init(fixture name: String, runner: String = "ada") throws {
        track = try #require(GPXImport.tracks(from: fixture(name)).first)
        let outcome = try RunImport.importRun(track, runner: runner, into: store, now: 1_700_000_000)
        run = try #require(try store.run(id: outcome.runID))
        fixes = try store.fixes(ofRun: outcome.runID)
    }
}

@Suite(.mayBlock) struct ExportTests {
    @Test func importStoresEverythingThroughTheEngine() throws {
        let imported = try ImportedRun(fixture: "strava-run-1.gpx")
        let record = imported.run.record
        #expect(record.status == .saved)
        #expect(record.distance > 1000)
        #expect(imported.fixes.count == imported.track.count)
        #expect(imported.fixes.map(\.fix) == imported.track)
        let rejected = imported.fixes.filter { !$0.isAccepted }.count
        #expect(record.rejections.values.reduce(0, +) == rejected)
        #expect(!imported.run.splits.isEmpty)
        #expect(!imported.run.awards.isEmpty)
        // The first run earns badges, which land in the runner's saved history.
        let runner = try #require(try imported.store.runner(named: "ada"))
        #expect(Set(imported.run.awards.filter { $0.award.tier == .earned }.map(\.award.badge.id))
                == Set(runner.history.records.keys))
        #expect(try imported.store.liveRuns().isEmpty)

        // A second import for the same runner keeps the runner and its key.
        let again = try RunImport.importRun(imported.track, runner: "ada", into: imported.store, now: 1_700_000_001)
        #expect(again.newRunnerKey == nil)
        #expect(again.runID != record.id)
        #expect(try imported.store.runs(of: "ada", offset: 0, limit: 10).count == 2)
    }

    /// The same import into both stores stores the same things.
    @Test func importIntoSQLiteMatchesMemory() throws {
        let directory = TemporaryDirectory()
        let memory = try ImportedRun(fixture: "strava-run-1.gpx")
        let sqlite = try SQLiteRunStore(path: directory.path("runs.sqlite"))
        defer { sqlite.close() }
        let outcome = try RunImport.importRun(memory.track, runner: "ada", into: sqlite, now: 1_700_000_000)
        let run = try #require(try sqlite.run(id: outcome.runID))
        #expect(run.record == memory.run.record)
        #expect(run.splits == memory.run.splits)
        #expect(run.checkpoints == memory.run.checkpoints)
        #expect(run.awards == memory.run.awards)
        #expect(try sqlite.fixes(ofRun: outcome.runID) == memory.fixes)
        #expect(try sqlite.runner(named: "ada")?.history == memory.store.runner(named: "ada")?.history)
    }

    @Test func newRunnerKeyVerifiesAgainstTheStoredHash() throws {
        let store = MemoryRunStore()
        let track = try #require(GPXImport.tracks(from: fixture("gpxpy-track-with-empty-segment.gpx")).first)
        let outcome = try RunImport.importRun(track, runner: "grace", into: store, now: 1)
        let key = try #require(outcome.newRunnerKey)
        let runner = try #require(try store.runner(named: "grace"))
        #expect(RunnerKey.verify(key, against: runner.keyHash))
        #expect(runner.keyHash != key)
    }

    @Test(arguments: ["strava-run-1.gpx", "gpxpy-track-with-empty-segment.gpx", "gpxpy-gpx1.0_with_all_fields.gpx"])
    func gpxValidatesAndRoundTripsEveryAcceptedFix(fixtureName: String) throws {
        let directory = TemporaryDirectory()
        let imported = try ImportedRun(fixture: fixtureName, runner: "Zoë <&> \"quotes\" 'x' \u{07}")
        let gpx = RunExport.gpx(imported.run, fixes: imported.fixes)
        let schema = try #require(Bundle.module.url(forResource: "gpx-1.1", withExtension: "xsd", subdirectory: "Fixtures"))
        try expectValidXML(gpx, schema: schema, in: directory)

        let accepted = imported.fixes.filter(\.isAccepted).map(\.fix)
        let exported = try GPXImport.tracks(from: Data(gpx.utf8))
        #expect(exported.count == (accepted.isEmpty ? 0 : 1))
        let back = exported.first ?? []
        #expect(back.count == accepted.count)
        for (original, read) in zip(accepted, back) {
            #expect(abs(original.latitude - read.latitude) < 1e-9)
            #expect(abs(original.longitude - read.longitude) < 1e-9)
            #expect(abs(original.timestamp - read.timestamp) < 0.001)
            #expect(original.altitude == read.altitude)
        }
        #expect(gpx.contains("<ele>") == accepted.contains { $0.altitude != nil })
        #expect(gpx.contains("<moonrunner:accuracy>5</moonrunner:accuracy>") || accepted.allSatisfy { $0.accuracy != 5 })
        #expect(gpx.contains("Zoë &lt;&amp;&gt; &quot;quotes&quot; &apos;x&apos;"))
        #expect(!gpx.contains("\u{07}"))
    }

    @Test func gpxTimesKeepFractions() {
        #expect(ExportFormatting.isoTime(1_620_838_516) == "2021-05-12T16:55:16Z")
        #expect(ExportFormatting.isoTime(1_620_838_516.25) == "2021-05-12T16:55:16.25Z")
        #expect(ExportFormatting.isoTime(1_620_838_516.9996) == "2021-05-12T16:55:17Z")
        #expect(ExportFormatting.isoTime(-0.5) == "1969-12-31T23:59:59.5Z")
        #expect(ExportFormatting.decimal(0.00001) == "0.00001")
        #expect(ExportFormatting.decimal(-1.5e-12) == "0")
    }

    @Test func geoJSONParsesBackWithColouredSegmentsBadgesAndSplits() throws {
        let imported = try ImportedRun(fixture: "strava-run-1.gpx")
        let text = RunExport.geoJSON(imported.run, fixes: imported.fixes)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["type"] as? String == "FeatureCollection")
        let all = try #require(root["features"] as? [[String: Any]])
        func features(_ kind: String) -> [[String: Any]] {
            all.filter { ($0["properties"] as? [String: Any])?["kind"] as? String == kind }
        }
        // The route is the engine's smoothed track (what the run page draws), not the raw fixes.
        var tracker = RunTracker()
        var starts = Set<Int>(), accepted = 0
        for stored in imported.fixes {
            let (outcome, startsSegment) = tracker.addNotingSegment(stored.fix, now: stored.received)
            guard case .accepted = outcome else { continue }
            if startsSegment { starts.insert(accepted) }
            accepted += 1
        }
        let measured = tracker.finish().track
        #expect(measured.count == imported.fixes.filter(\.isAccepted).count)
        // The file's one stop (26 s over 10 m, a pause in the recording's gap) is not drawn across.
        #expect(starts.count == 1)
        let route = features("route")
        #expect(route.count == measured.count - 1 - starts.count)
        let expectedColours = PaceColours.colours(for: measured).map(\.hex).enumerated()
            .filter { !starts.contains($0.offset + 1) }.map(\.element)
        let strokes = route.map { ($0["properties"] as? [String: Any])?["stroke"] as? String ?? "" }
        #expect(strokes == expectedColours)
        let firstGeometry = try #require(route.first?["geometry"] as? [String: Any])
        #expect(firstGeometry["type"] as? String == "LineString")
        let coordinates = try #require(firstGeometry["coordinates"] as? [[Double]])
        let expected = [[measured[0].longitude, measured[0].latitude], [measured[1].longitude, measured[1].latitude]]
        // JSON's decimal text brings a computed coordinate back to within its last bit.
        #expect(coordinates.count == 2 && zip(coordinates, expected).allSatisfy { zip($0, $1).allSatisfy { abs($0 - $1) < 1e-12 } },
                "\(coordinates)")
        #expect(Set(expectedColours).count > 3)

        let badges = features("badge")
        #expect(badges.count == imported.run.awards.count)
        let firstBadge = try #require(badges.first?["properties"] as? [String: Any])
        #expect(firstBadge["name"] as? String == imported.run.awards[0].award.badge.name)
        #expect(firstBadge["distance"] as? Double == imported.run.awards[0].award.badge.distance)

        let splits = features("split")
        #expect(splits.count == imported.run.splits.filter { $0.unit == .kilometre }.count)
        #expect(splits.count == Int(imported.run.record.distance / 1000))
    }

    @Test func svgIsWellFormedWithRouteMarkersAndLegend() throws {
        let directory = TemporaryDirectory()
        let imported = try ImportedRun(fixture: "strava-run-1.gpx", runner: "A&B <script>")
        let svg = RunExport.svg(imported.run, fixes: imported.fixes)
        try expectValidXML(svg, in: directory)
        // The importer's XML parser checks nesting too, so the test means something without xmllint.
        var counter = ElementCounter()
        try XMLEvents.parse(Data(svg.utf8), into: &counter)
        let elements = counter.counts
        #expect(elements["svg"] == 1)
        #expect((elements["polyline"] ?? 0) > 3)
        #expect(elements["circle"] == Set(imported.run.awards.map(\.award.badge.id)).count)
        #expect(svg.contains(">slow<") && svg.contains(">average<") && svg.contains(">fast<"))
        #expect(svg.contains("A&amp;B &lt;script&gt;"))
        for colour in [PaceColours.red, PaceColours.yellow, PaceColours.green] { #expect(svg.contains(colour.hex)) }
    }

    @Test func everyBadgeLabelStaysInsideThePicture() throws {
        let imported = try ImportedRun(fixture: "strava-run-1.gpx", runner: "ann")
        let svg = RunExport.svg(imported.run, fixes: imported.fixes, width: 400)
        func attribute(_ name: String, in tag: Substring) -> Double? {
            guard let range = tag.range(of: "\(name)=\"") else { return nil }
            return Double(tag[range.upperBound...].prefix { $0 != "\"" })
        }
        let width = try #require(attribute("width", in: svg[...]))
        let height = try #require(attribute("height", in: svg[...]))
        var labels = 0
        for tag in svg.split(separator: "\n").filter({ $0.contains("<text") && $0.contains("(") }) {
            let x = try #require(attribute("x", in: tag)), y = try #require(attribute("y", in: tag))
            var text = String(tag.split(separator: ">")[1].split(separator: "<")[0])
            for (entity, character) in [("&apos;", "'"), ("&quot;", "\""), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")] {
                text = text.replacingOccurrences(of: entity, with: character)
            }
            let extent = Double(text.count) * 7.0
            let (left, right) = tag.contains("text-anchor=\"end\"") ? (x - extent, x) : (x, x + extent)
            #expect(left >= 0 && right <= width && y > 0 && y <= height, "\(tag)")
            labels += 1
        }
        #expect(labels == Set(imported.run.awards.map(\.award.badge.id)).count)
    }

    @Test func exportsOfARunWithoutFixesAreStillValid() throws {
        let directory = TemporaryDirectory()
        let run = StoredRun(record: RunRecord(id: 1, runner: "ada", started: 1_700_000_000))
        let schema = try #require(Bundle.module.url(forResource: "gpx-1.1", withExtension: "xsd", subdirectory: "Fixtures"))
        try expectValidXML(RunExport.gpx(run, fixes: []), schema: schema, in: directory)
        let tcxSchema = try #require(Bundle.module.url(forResource: "TrainingCenterDatabasev2", withExtension: "xsd",
                                                       subdirectory: "Fixtures"))
        try expectValidXML(RunExport.tcx(run, fixes: []), schema: tcxSchema, in: directory)
        try expectValidXML(RunExport.svg(run, fixes: []), in: directory)
        let json = try JSONSerialization.jsonObject(with: Data(RunExport.geoJSON(run, fixes: []).utf8)) as? [String: Any]
        #expect((json?["features"] as? [Any])?.isEmpty == true)
    }
}

/// Counts the elements of a document by local name.
struct ElementCounter: XMLEventHandler {
    var counts: [String: Int] = [:]

    mutating func start(_ element: XMLElementStart) throws(StoreError) { counts[element.name, default: 0] += 1 }
    mutating func end(_ name: String, namespace: String, text: String, line: Int) throws(StoreError) {}
}
