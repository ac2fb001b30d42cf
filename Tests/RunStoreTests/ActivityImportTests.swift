import Foundation
import MoonRunnerTestSupport
import RunCore
import Testing
@testable import RunStore

/// A run imported from a fixture file into a fresh store, with what export needs.
struct ImportedFile {
    let store: any RunStore
    let runs: [(run: StoredRun, fixes: [StoredFix], source: ImportRecord)]
    let activities: [ImportedActivity]

    init(data: Data, runner: String = "ada", store: any RunStore = MemoryRunStore()) throws {
        self.store = store
        let (_, results) = try RunImport.importFile(data, runner: runner, into: store, now: 1_700_000_000)
        var runs: [(StoredRun, [StoredFix], ImportRecord)] = []
        var activities: [ImportedActivity] = []
        for result in results {
            guard case .imported(let outcome, let activity) = result else {
                Issue.record("activity already imported")
                continue
            }
            let run = try #require(try store.run(id: outcome.runID))
            let source = try #require(try store.importRecord(ofRun: outcome.runID))
            runs.append((run, try store.fixes(ofRun: outcome.runID), source))
            activities.append(activity)
        }
        self.runs = runs
        self.activities = activities
    }

    init(fixture name: String, runner: String = "ada") throws {
        try self.init(data: fixture(name), runner: runner)
    }
}

/// Expects two runs to have the same figures: distance to the centimetre, moving and elapsed time, the same
/// splits and checkpoints, the same badges at the same moments.
func expectSameFigures(_ a: StoredRun, _ b: StoredRun, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(abs(a.record.distance - b.record.distance) < 0.01, "distance \(a.record.distance) vs \(b.record.distance)",
            sourceLocation: sourceLocation)
    #expect(abs(a.record.movingTime - b.record.movingTime) < 0.001, sourceLocation: sourceLocation)
    #expect(abs(a.record.elapsed - b.record.elapsed) < 0.001, sourceLocation: sourceLocation)
    #expect(a.splits.count == b.splits.count, sourceLocation: sourceLocation)
    for (x, y) in zip(a.splits, b.splits) {
        #expect(x.unit == y.unit && x.number == y.number && abs(x.elapsed - y.elapsed) < 0.001
                    && abs(x.duration - y.duration) < 0.001, "split \(x) vs \(y)", sourceLocation: sourceLocation)
    }
    #expect(a.checkpoints.map(\.to.id) == b.checkpoints.map(\.to.id), sourceLocation: sourceLocation)
    let badges = { (run: StoredRun) in run.awards.map { "\($0.award.badge.id) \($0.award.tier.rawValue)" } }
    #expect(badges(a) == badges(b), sourceLocation: sourceLocation)
    for (x, y) in zip(a.awards, b.awards) {
        #expect(abs(x.award.elapsed - y.award.elapsed) < 0.001, sourceLocation: sourceLocation)
    }
}

/// The schema fixtures.
func schema(_ name: String) throws -> URL {
    try #require(Bundle.module.url(forResource: name, withExtension: "xsd", subdirectory: "Fixtures"))
}

/// Expects two exports to have the same lines, naming the first that differs.
func expectSameLines(_ a: [String], _ b: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(a.count == b.count, "\(a.count) lines vs \(b.count)", sourceLocation: sourceLocation)
    if let (index, _) = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
        Issue.record("line \(index) differs: \(a[index]) vs \(b[index])", sourceLocation: sourceLocation)
    }
}

/// The track points of an export, without the lines that name the run (its id differs between stores).
func trackLines(_ text: String) -> [String] {
    text.split(separator: "\n").map(String.init).filter { !$0.contains("Run ") && !$0.contains("<desc>") }
}

@Suite(.mayBlock) struct ActivityImportTests {
    @Test func anETrexPointWithoutPositionIsSkippedAndTheRestImports() throws {
        let data = try fixture("etrex-first-point-without-position.gpx")
        let file = try ActivityFile.read(data)
        #expect(file.format == .gpx)
        let activity = try #require(file.activities.first)
        let points = String(decoding: data, as: UTF8.self).components(separatedBy: "<trkpt").count - 1
        #expect(activity.pointsWithoutPosition == 1)
        #expect(activity.pointCount == points - 1)
        // The first usable point is the file's second.
        #expect(activity.firstPointTime == ISO8601.parse("2020-12-18T06:16:00Z"))
        let imported = try ImportedFile(data: data)
        #expect(imported.runs.first?.source.skippedPoints == 1)
        #expect((imported.runs.first?.run.record.distance ?? 0) > 1000)
    }

    @Test func aSegmentBreakIsAPause() throws {
        let data = try fixture("strava-paused-two-segments.gpx")
        let activity = try #require(try ActivityFile.read(data).activities.first)
        #expect(activity.segments.map(\.count) == [1026, 435])
        let gap = activity.segments[1][0].timestamp - activity.segments[0].last!.timestamp
        #expect(gap == 63 * 60)

        let paused = try #require(try ImportedFile(data: data).runs.first)
        #expect(paused.source.pausesBefore == [1027])
        // The same points as one segment, as the importer used to read them, with no pause found in gaps
        // either: the straight line across.
        var blind = TrackerConfiguration()
        blind.filter.pauseGapSpeed = -1
        let joined = try RunImport.importRun(activity.fixes, runner: "ada", into: MemoryRunStore(), configuration: blind,
                                             now: 1)
        // Finding pauses in gaps, the engine sees this one without the file's break: 63 minutes over 2.9 km is
        // walking pace.
        let found = try RunImport.importRun(activity.fixes, runner: "cy", into: MemoryRunStore(), now: 1)
        // Each stretch on its own, for what the paused run should add up to.
        let halves = try activity.segments.map {
            try RunImport.importRun($0, runner: "bob", into: MemoryRunStore(), now: 1).record
        }
        let record = paused.run.record
        let straightLine = Geodesy.distance(from: activity.segments[0].last!.coordinate,
                                            to: activity.segments[1][0].coordinate)
        #expect(straightLine > 2500)
        #expect(joined.record.distance - record.distance > 0.9 * straightLine, "no distance across the pause")
        #expect(found.record.distance == record.distance && found.record.movingTime == record.movingTime,
                "the file's break and the gap found make the same pause")
        #expect(abs(record.distance - halves.map(\.distance).reduce(0, +)) < 0.005 * record.distance)
        #expect(record.movingTime <= record.elapsed - gap, "no moving time in the pause")
        #expect(abs(record.movingTime - halves.map(\.movingTime).reduce(0, +)) < 60)
        #expect(record.elapsed == activity.segments[1].last!.timestamp - activity.segments[0][0].timestamp,
                "elapsed time still runs")
        // Splits resume after the pause: one kilometre holds the pause, the others are run at running pace.
        let kilometres = paused.run.splits.filter { $0.unit == .kilometre }
        #expect(kilometres.count == Int(record.distance / 1000))
        #expect(kilometres.filter { $0.duration > gap }.count == 1)
        #expect(kilometres.filter { $0.duration < 600 }.count == kilometres.count - 1)
    }

    @Test func aByteOrderMarkAndVendorExtensionsChangeNothing() throws {
        let plain = try fixture("strava-run-1.gpx")
        let marked = try ActivityFile.read(Data([0xEF, 0xBB, 0xBF]) + plain)
        #expect(marked.activities == (try ActivityFile.read(plain).activities))
        #expect(marked.activities.first?.name == "There's a hole in my pocket 🔑👋")
        // Garmin's, a TCX-to-GPX converter's and a made-up vendor's extensions with GPX-like names inside.
        let gpx = """
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
                 xmlns:tc2="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" xmlns:v="urn:vendor">
            <trk><extensions><v:trkseg><v:trkpt lat="9" lon="9"><v:time>2020-01-01T00:00:00Z</v:time></v:trkpt></v:trkseg></extensions>
            <trkseg><trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time><extensions><gpxtpx:TrackPointExtension>
            <gpxtpx:hr>150</gpxtpx:hr></gpxtpx:TrackPointExtension><v:time>garbage</v:time><v:hdop>40</v:hdop>
            <tc2:Trackpoint><tc2:Time>garbage</tc2:Time></tc2:Trackpoint></extensions></trkpt></trkseg></trk></gpx>
            """
        let file = try ActivityFile.read(Data(gpx.utf8))
        #expect(file.activities.map(\.fixes) == [[Fix(latitude: 1, longitude: 2, accuracy: 5, timestamp: 1_577_836_800)]])
    }

    @Test func altitudesComeInFromGPXAndTCXAndGiveTheRunsGainAndLoss() throws {
        let gpx = try ImportedFile(fixture: "strava-run-1.gpx")
        let (run, fixes, _) = try #require(gpx.runs.first)
        #expect(fixes.allSatisfy { $0.fix.altitude != nil })
        #expect(fixes.first?.fix.altitude == 74.2)
        let measured = try #require(ElevationMeter.measure(fixes.filter(\.isAccepted).map(\.fix)))
        #expect(run.record.elevationGain == measured.gain && run.record.elevationLoss == measured.loss)
        #expect(measured.gain > 150 && measured.gain < 281)  // the file's sum of rises is 280.1 m
        let tcx = try ImportedFile(data: fixture("garmin-two-runs.tcx"))
        for (run, fixes, _) in tcx.runs {
            #expect(fixes.contains { $0.fix.altitude != nil })
            #expect((run.record.elevationGain ?? 0) > 0 && (run.record.elevationLoss ?? 0) > 0)
        }
        // A file without altitudes gives a run without gain, not a gain of 0.
        let flat = try ImportedFile(data: Data("""
            <gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1"><trk><trkseg>
            <trkpt lat="51.5" lon="-0.12"><time>2024-01-01T10:00:00Z</time></trkpt>
            <trkpt lat="51.5001" lon="-0.12"><time>2024-01-01T10:00:05Z</time></trkpt>
            </trkseg></trk></gpx>
            """.utf8))
        #expect(flat.runs.first?.run.record.elevationGain == nil)
    }

    @Test func aTCXWithTwoRunsBecomesTwoRunsKeepingTheDeviceDistance() throws {
        let file = try ActivityFile.read(fixture("garmin-two-runs.tcx"))
        #expect(file.format == .tcx)
        #expect(file.activities.count == 2)
        let (first, second) = (file.activities[0], file.activities[1])
        #expect(first.name == "2019-01-22T18:33:02Z")
        #expect(first.pointsWithoutPosition == 3 && second.pointsWithoutPosition == 5)
        #expect(first.pointCount == 791 - 3 && second.pointCount == 673 - 5)
        // The lap distances add up to the device's figure (the generator's 6253.04 m and 5087.44 m).
        #expect(abs((first.deviceDistance ?? 0) - 6253.04) < 0.05)
        #expect(abs((second.deviceDistance ?? 0) - 5087.44) < 0.05)
        // Laps continue the track; the second Track inside the second run's third lap is a pause.
        #expect(first.segments.count == 1 && second.segments.count == 2)
        #expect(second.segments[1][0].timestamp - second.segments[0].last!.timestamp > 8 * 60)

        for kind in StoreKind.allCases {
            let directory = TemporaryDirectory()
            let imported = try ImportedFile(data: fixture("garmin-two-runs.tcx"), store: kind.make(in: directory))
            defer { imported.store.close() }
            #expect(imported.runs.count == 2)
            for ((run, _, source), activity) in zip(imported.runs, file.activities) {
                #expect(source.format == .tcx)
                #expect(source.deviceDistance == activity.deviceDistance, "stored in \(kind)")
                #expect(source.skippedPoints == activity.pointsWithoutPosition)
                // Our distance is the engine's, near the device's but not copied from it.
                let device = activity.deviceDistance ?? 0
                #expect(run.record.distance != device && abs(run.record.distance - device) < 0.05 * device)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func importingTheSameFileAgainMakesNoNewRun(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        let data = try fixture("garmin-two-runs.tcx")
        let first = try RunImport.importFile(data, runner: "ada", into: store, now: 1).results
        let ids = first.compactMap { result -> Int64? in
            if case .imported(let outcome, _) = result { return outcome.runID }
            return nil
        }
        #expect(ids.count == 2)
        let again = try RunImport.importFile(data, runner: "ada", into: store, now: 2).results
        let duplicates = again.compactMap { result -> Int64? in
            if case .alreadyImported(let id, _) = result { return id }
            return nil
        }
        #expect(duplicates == ids)
        #expect(try store.runs(of: "ada", offset: 0, limit: 10).count == 2)
        // Another runner's copy of the same file is that runner's run.
        let other = try RunImport.importFile(data, runner: "bob", into: store, now: 3).results
        #expect(other.allSatisfy { if case .imported = $0 { true } else { false } })
    }

    @Test(arguments: ["strava-run-1.gpx", "strava-paused-two-segments.gpx", "etrex-first-point-without-position.gpx",
                      "gpxpy-track-with-empty-segment.gpx"])
    func gpxRoundTripGivesTheSameRun(name: String) throws {
        let directory = TemporaryDirectory()
        let original = try #require(try ImportedFile(fixture: name).runs.first)
        let exported = RunExport.gpx(original.run, fixes: original.fixes, source: original.source)
        try expectValidXML(exported, schema: schema("gpx-1.1"), in: directory)
        let again = try #require(try ImportedFile(data: Data(exported.utf8)).runs.first)
        expectSameFigures(original.run, again.run)
        let exportedAgain = RunExport.gpx(again.run, fixes: again.fixes, source: again.source)
        expectSameLines(trackLines(exportedAgain), trackLines(exported))
    }

    @Test func tcxRoundTripGivesTheSameRuns() throws {
        let directory = TemporaryDirectory()
        // Each run into a store of its own, so that the original and the copy start from the same badge history.
        let activities = try ActivityFile.read(fixture("garmin-two-runs.tcx")).activities
        #expect(activities.count == 2)
        for activity in activities {
            let store = MemoryRunStore()
            guard case .imported(let outcome, _) = try RunImport.importActivity(activity, format: .tcx, runner: "ada",
                                                                                 into: store, now: 1) else {
                Issue.record("not imported")
                continue
            }
            let original = (run: try #require(try store.run(id: outcome.runID)), fixes: try store.fixes(ofRun: outcome.runID),
                            source: try #require(outcome.source))
            let exported = RunExport.tcx(original.run, fixes: original.fixes, source: original.source)
            try expectValidXML(exported, schema: schema("TrainingCenterDatabasev2"), in: directory)
            let file = try ActivityFile.read(Data(exported.utf8))
            #expect(file.format == .tcx && file.activities.count == 1)
            let again = try #require(try ImportedFile(data: Data(exported.utf8)).runs.first)
            expectSameFigures(original.run, again.run)
            // <AltitudeMeters> out and in again: the same altitudes, so the same gain and loss.
            #expect(exported.contains("<AltitudeMeters>"))
            #expect(again.fixes.map(\.fix.altitude) == original.fixes.filter(\.isAccepted).map(\.fix.altitude))
            #expect(original.run.record.elevationGain != nil)
            #expect(again.run.record.elevationGain == original.run.record.elevationGain)
            #expect(again.run.record.elevationLoss == original.run.record.elevationLoss)
            #expect(abs((again.source.deviceDistance ?? 0) - (original.source.deviceDistance ?? 1)) < 0.001)
            // The export writes the pauses the engine found in gaps as breaks, which come back as the file's own.
            let breaks = RunExport.segments(of: original.fixes, pausesBefore: original.source.pausesBefore).count - 1
            #expect(again.source.pausesBefore.count == breaks)
            let exportedAgain = RunExport.tcx(again.run, fixes: again.fixes, source: again.source)
            expectSameLines(trackLines(exportedAgain), trackLines(exported))
            // And across formats: the TCX run as GPX measures the same.
            let gpx = RunExport.gpx(again.run, fixes: again.fixes, source: again.source)
            expectSameFigures(original.run, try #require(try ImportedFile(data: Data(gpx.utf8)).runs.first).run)
        }
    }

    @Test func exportsShowThePauseAndLapsPerKilometre() throws {
        let paused = try #require(try ImportedFile(fixture: "strava-paused-two-segments.gpx").runs.first)
        let gpx = RunExport.gpx(paused.run, fixes: paused.fixes, source: paused.source)
        // The file's pause, and the stops where the watch recorded nothing (10 to 37 s over a few metres).
        let segments = RunExport.segments(of: paused.fixes, pausesBefore: paused.source.pausesBefore).count
        #expect(segments > 2)
        #expect(gpx.components(separatedBy: "<trkseg>").count - 1 == segments)
        #expect(gpx.contains("<desc>\(String(format: "%.2f", paused.run.record.distance / 1000)) km in "))
        let tcx = RunExport.tcx(paused.run, fixes: paused.fixes, source: paused.source)
        let laps = tcx.components(separatedBy: "<Lap ").count - 1
        #expect(laps == Int(paused.run.record.distance / 1000) + 1)
        #expect(tcx.components(separatedBy: "<Track>").count - 1 == laps + segments - 1, "a lap has a track more a pause")
        #expect(tcx.contains("<DistanceMeters>1000</DistanceMeters>"))
    }

    @Test func aReanchorAfterAJumpIsExportedAsASegmentSoItSurvivesTheRoundTrip() throws {
        // A live-style run: the first fix is 300 m off, the rest agree with each other, so the filter
        // rejects a few as jumps and then re-anchors on them.
        var fixes = [Fix(latitude: 51.5027, longitude: -0.12, accuracy: 5, timestamp: 1_700_000_000)]
        for step in 1...400 {
            fixes.append(Fix(latitude: 51.5 + Double(step) * 0.00003, longitude: -0.12, accuracy: 5,
                             timestamp: 1_700_000_000 + Double(step)))
        }
        let store = MemoryRunStore()
        let outcome = try RunImport.importRun(fixes, runner: "ada", into: store, now: 1)
        #expect(outcome.record.rejections[.jump] == 4)
        let run = try #require(try store.run(id: outcome.runID))
        let stored = try store.fixes(ofRun: outcome.runID)
        #expect(RunExport.segments(of: stored).map(\.count) == [1, 396])
        let again = try #require(try ImportedFile(data: Data(RunExport.gpx(run, fixes: stored).utf8)).runs.first)
        expectSameFigures(run, again.run)
    }
}

extension ActivityImportTests {
    @Test func mapsAreNotDrawnAcrossThePause() throws {
        let paused = try #require(try ImportedFile(fixture: "strava-paused-two-segments.gpx").runs.first)
        let accepted = paused.fixes.filter(\.isAccepted).map(\.fix)
        let resumed = try #require(paused.source.pausesBefore.first)
        let firstAfter = try #require(paused.fixes.filter(\.isAccepted).firstIndex { $0.sequence >= resumed })
        let root = try #require(try JSONSerialization.jsonObject(
            with: Data(RunExport.geoJSON(paused.run, fixes: paused.fixes, source: paused.source).utf8)) as? [String: Any])
        let routes = (root["features"] as? [[String: Any]] ?? []).filter {
            ($0["properties"] as? [String: Any])?["kind"] as? String == "route"
        }
        // The breaks: the file's pause, and the stops the engine finds in the recording's gaps.
        let breaks = RunExport.segments(of: paused.fixes, pausesBefore: paused.source.pausesBefore).count - 1
        #expect(routes.count == accepted.count - 1 - breaks, "every pair but those across a pause")
        let across = [[accepted[firstAfter - 1].longitude, accepted[firstAfter - 1].latitude],
                      [accepted[firstAfter].longitude, accepted[firstAfter].latitude]]
        #expect(!routes.contains { ($0["geometry"] as? [String: Any])?["coordinates"] as? [[Double]] == across })
        // Without the import record the engine still finds it: 63 minutes over 2.9 km is walking pace.
        let unaware = try #require(try JSONSerialization.jsonObject(
            with: Data(RunExport.geoJSON(paused.run, fixes: paused.fixes).utf8)) as? [String: Any])
        #expect((unaware["features"] as? [Any])?.count == (root["features"] as? [Any])?.count)

        let svg = RunExport.svg(paused.run, fixes: paused.fixes, source: paused.source)
        let polylines = svg.components(separatedBy: "<polyline ").dropFirst()
        let points = polylines.reduce(0) { $0 + ($1.components(separatedBy: "points=\"")[1].split(separator: "\"")[0]
            .split(separator: " ").count) }
        let runs = polylines.count
        // n fixes in one piece make n - 1 segments over (pieces + n - 1) points; each pause removes one segment.
        #expect(points - runs == accepted.count - 1 - breaks)
    }
}

extension ActivityImportTests {
    /// The issue's case: a phone's run (accuracy varying fix to fix, times with milliseconds) exported and
    /// imported again measured less, because the importer ignored the accuracy it had written.
    @Test(arguments: [ActivityFormat.gpx, .tcx])
    func aPhoneRunWithVaryingAccuracySurvivesTheRoundTrip(format: ActivityFormat) throws {
        var fixes: [Fix] = []
        var latitude = 51.5, longitude = -0.12
        for step in 0..<2800 {
            // About 3 m/s along a wavy line, accuracy between 3 and 15 m in an irregular pattern.
            latitude += 0.000022 + 0.000004 * sin(Double(step) / 40)
            longitude += 0.000012 * cos(Double(step) / 90)
            let accuracy = 3 + 12 * abs(sin(Double(step) * 0.7) * cos(Double(step) * 0.13))
            fixes.append(Fix(latitude: latitude, longitude: longitude, accuracy: accuracy,
                             timestamp: 1_700_000_000.125 + Double(step) * 1.001))
        }
        let store = MemoryRunStore()
        let outcome = try RunImport.importRun(fixes, runner: "ada", into: store, now: 1)
        let run = try #require(try store.run(id: outcome.runID))
        let stored = try store.fixes(ofRun: outcome.runID)
        #expect(run.record.distance > 6500)
        let text = format == .gpx ? RunExport.gpx(run, fixes: stored) : RunExport.tcx(run, fixes: stored)
        let again = try #require(try ImportedFile(data: Data(text.utf8)).runs.first)
        #expect(again.source.format == format)
        #expect(again.fixes.map(\.fix.accuracy) == stored.filter(\.isAccepted).map(\.fix.accuracy))
        expectSameFigures(run, again.run)
    }

    @Test(arguments: [
        #"<gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1"><wpt lat="1" lon="2"><trk><trkseg/></trk></wpt></gpx>"#,
        #"<gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1"><trkseg><trkpt lat="1" lon="2"/></trkseg></gpx>"#,
        #"<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activity><Lap><Track/><Track/></Lap></Activity></TrainingCenterDatabase>"#,
    ])
    func misplacedTracksAreRefusedNotACrash(document: String) {
        // Found by the fuzzer: a track element outside its proper parents used to index an empty list. Now it is
        // no track at all: either the file is refused or it holds no activity.
        let file = try? ActivityFile.read(Data(document.utf8))
        #expect(file?.activities.isEmpty ?? true)
    }
}
