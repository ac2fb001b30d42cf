import Foundation
import MoonRunnerTestSupport
import RunCore
import Testing
@testable import RunStore

/// Issue 27's files from real devices: a multisport TCX, and a handheld GPS's first point refused by the filter.
@Suite struct DeviceFileTruthTests {
    /// garmin-two-runs.tcx's two activities as one multisport session: the first a run, the second (after a
    /// transition) a ride, as a triathlon watch writes them.
    static func multisport() throws -> (document: String, plain: String) {
        let plain = String(decoding: try fixture("garmin-two-runs.tcx"), as: UTF8.self)
        let blocks = plain.components(separatedBy: "<Activity Sport=\"Running\">").dropFirst().map {
            "<Activity Sport=\"Running\">" + $0.components(separatedBy: "</Activity>")[0] + "</Activity>"
        }
        #expect(blocks.count == 2)
        let second = blocks[1].replacingOccurrences(of: "<Activity Sport=\"Running\">", with: "<Activity Sport=\"Biking\">")
        let transition = """
            <Transition StartTime="2019-01-22T19:00:00Z"><TotalTimeSeconds>95</TotalTimeSeconds>\
            <DistanceMeters>0</DistanceMeters><Calories>3</Calories><Intensity>Active</Intensity>\
            <TriggerMethod>Manual</TriggerMethod><Track><Trackpoint><Time>2019-01-22T19:00:30Z</Time>\
            <Position><LatitudeDegrees>53.5</LatitudeDegrees><LongitudeDegrees>-1.4</LongitudeDegrees></Position>\
            </Trackpoint></Track></Transition>
            """
        let session = "<MultiSportSession><Id>2019-01-22T18:33:02Z</Id><FirstSport>\(blocks[0])</FirstSport>"
            + "<NextSport>\(transition)\(second)</NextSport></MultiSportSession>"
        let head = plain.components(separatedBy: "<Activities>")[0]
        let tail = plain.components(separatedBy: "</Activities>")[1]
        return (head + "<Activities>" + session + "</Activities>" + tail, plain)
    }

    @Test func aMultisportSessionImportsEachLegAsARunWithItsSport() throws {
        let (document, plain) = try Self.multisport()
        try expectValidXML(document, schema: schema("TrainingCenterDatabasev2"), in: TemporaryDirectory())
        let file = try ActivityFile.read(Data(document.utf8))
        #expect(file.format == .tcx)
        #expect(file.activities.map(\.sport) == ["Running", "Biking"])
        let legs = try ImportedFile(data: Data(document.utf8)), separate = try ImportedFile(data: Data(plain.utf8))
        #expect(legs.runs.count == 2 && separate.runs.count == 2)
        for (leg, run) in zip(legs.runs, separate.runs) {
            expectSameFigures(leg.run, run.run)
            #expect(leg.source.deviceDistance == run.source.deviceDistance)
        }
    }

    /// strava-run-1.gpx with a first point 11 s earlier, 40 m off and reported at hdop 8 (40 m): a handheld
    /// GPS's first fix.
    static func withAnInaccurateFirstPoint() throws -> (document: Data, firstTime: Double, plain: Data) {
        let plain = try fixture("strava-run-1.gpx")
        let activity = try #require(try ActivityFile.read(plain).activities.first)
        let first = try #require(activity.fixes.first)
        let time = first.timestamp - 11
        let point = "<trkpt lat=\"\(first.latitude + 0.0004)\" lon=\"\(first.longitude)\"><time>"
            + ExportFormatting.isoTime(time) + "</time><hdop>8</hdop></trkpt>"
        let text = String(decoding: plain, as: UTF8.self)
        let start = try #require(text.range(of: "<trkpt "))
        return (Data(text.replacingCharacters(in: start.lowerBound..<start.lowerBound, with: point).utf8), time, plain)
    }

    @Test func theClockStartsAtTheFirstRecordedPointEvenWhenTheFilterRefusesIt() throws {
        let (document, firstTime, plain) = try Self.withAnInaccurateFirstPoint()
        let store = MemoryRunStore()
        let (_, results) = try RunImport.importFile(document, runner: "ada", into: store, now: 1)
        guard case .imported(let outcome, let activity) = try #require(results.first) else {
            Issue.record("not imported")
            return
        }
        let last = try #require(activity.fixes.last).timestamp
        #expect(outcome.firstPointRejection == .inaccurate)
        #expect(outcome.record.started == firstTime)
        #expect(outcome.record.elapsed == last - firstTime)
        #expect(try store.run(id: outcome.runID)?.record.elapsed == last - firstTime)
        // The distance starts at the first point kept: the same as the file without the refused point.
        let without = try #require(try ImportedFile(data: plain).runs.first).run.record
        #expect(abs(outcome.record.distance - without.distance) < 0.01)
        #expect(abs(outcome.record.elapsed - without.elapsed - 11) < 0.001)
        // The kilometre splits' clock started 11 s earlier too.
        let split = try #require(outcome.summary.splits.first { $0.unit == .kilometre })
        let plainSplit = try #require(try ImportedFile(data: plain).runs.first?.run.splits.first { $0.unit == .kilometre })
        #expect(abs(split.elapsed - plainSplit.elapsed - 11) < 0.5)
    }

    @Test func aGlitchedPointAnHourOffMovesNeitherEndOfTheClock() throws {
        let plain = try fixture("strava-run-1.gpx")
        let activity = try #require(try ActivityFile.read(plain).activities.first)
        var text = String(decoding: plain, as: UTF8.self)
        let middle = try #require(text.range(of: "<trkpt ", range: text.index(text.startIndex, offsetBy: text.count / 2)..<text.endIndex))
        let fix = activity.fixes[activity.fixes.count / 2]
        text.insert(contentsOf: "<trkpt lat=\"\(fix.latitude)\" lon=\"\(fix.longitude)\"><time>"
            + ExportFormatting.isoTime(activity.fixes[0].timestamp - 3600) + "</time></trkpt>", at: middle.lowerBound)
        let glitched = try #require(try ImportedFile(data: Data(text.utf8)).runs.first).run.record
        let clean = try #require(try ImportedFile(data: plain).runs.first).run.record
        #expect(glitched.started == clean.started && glitched.elapsed == clean.elapsed)
    }
}
