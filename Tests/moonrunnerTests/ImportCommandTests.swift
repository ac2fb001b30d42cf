import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing

/// `moonrunner import` as a person runs it: several files at once, one of each kind of trouble.
@Suite(.mayBlock) struct ImportCommandTests {
    static let fixtures = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")
    static let stravaRun = fixtures.appendingPathComponent("strava-run-1.gpx").path

    /// The runs of `runner` in the database at `path`.
    func runs(of runner: String, in path: String) throws -> [RunRecord] {
        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        return try store.runs(of: runner, offset: 0, limit: 100)
    }

    @Test func severalFilesWithProgressADuplicateAndFilesThatCannotBeRead() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("runs.sqlite").path
        let broken = folder.appendingPathComponent("broken.gpx").path
        try Data("<gpx><trk>\n<trkseg>".utf8).write(to: URL(fileURLWithPath: broken))
        let missing = folder.appendingPathComponent("nonexist.gpx").path
        let importer = try ChildProcess(["import", Self.stravaRun, Self.stravaRun, missing, broken,
                                         "--runner", "ann", "--db", database])
        #expect(importer.awaitExit() == 1, "a file failed")
        let output = importer.standardOutput
        #expect(output.contains("[1/4] \(Self.stravaRun): GPX, 1 activity"))
        #expect(output.contains("[2/4] \(Self.stravaRun): GPX, 1 activity\n  already imported as run "))
        #expect(output.contains("total: 1 run imported, 1 already imported, 2 files failed (4 files)"))
        // Durations as h:mm:ss, even under an hour.
        #expect(output.contains("  elapsed    0:41:50   moving "))
        let errors = importer.standardError
        #expect(errors.contains("moonrunner import: cannot read \(missing): no such file\n"))
        #expect(errors.contains("moonrunner import: \(broken): line 2: not well-formed XML"))
        #expect(!errors.contains("NSCocoaErrorDomain") && !errors.contains("Error Domain"))
        #expect(try runs(of: "ann", in: database).count == 1, "the good file imported once, the rest changed nothing")
    }

    @Test func theSummarySaysTheFirstPointWasRefusedAndCountsThePausesInGaps() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("runs.sqlite").path
        // strava-run-1.gpx with a first point 11 s early at hdop 8 (40 m, refused); the file stops once for
        // 26 s over 10 m (a pause in the gap).
        var text = try String(contentsOfFile: Self.stravaRun, encoding: .utf8)
        let start = try #require(text.range(of: "<trkpt "))
        text.insert(contentsOf: "<trkpt lat=\"53.8399\" lon=\"-1.7758\"><time>2021-05-12T16:55:05Z</time><hdop>8</hdop></trkpt>",
                    at: start.lowerBound)
        let file = folder.appendingPathComponent("handheld.gpx").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let importer = try ChildProcess(["import", file, "--runner", "ann", "--db", database])
        #expect(importer.awaitExit() == 0, "\(importer.standardError)")
        let output = importer.standardOutput
        #expect(output.contains("  start      the first point was filtered (inaccurate): the clock starts at it"), "\(output)")
        #expect(output.contains("  pauses     1 (1 where the recording stopped at walking pace or slower)"), "\(output)")
        let run = try #require(try runs(of: "ann", in: database).first)
        #expect(run.started == 1_620_838_505, "the first point's time, 2021-05-12T16:55:05Z")
    }

    @Test func theFormatIsToldByContentAndATCXExportImportsAsTheSameRun() throws {
        let folder = temporaryFolder()
        let first = folder.appendingPathComponent("first.sqlite").path
        #expect(try ChildProcess(["import", Self.stravaRun, "--runner", "ann", "--db", first]).awaitExit() == 0)
        let original = try #require(try runs(of: "ann", in: first).first)
        // A TCX file with a name that says nothing about its format.
        let exported = folder.appendingPathComponent("activity.xml").path
        let exporter = try ChildProcess(["export", String(original.id), "--format", "tcx", "--db", first, "--output", exported])
        #expect(exporter.awaitExit() == 0, "\(exporter.standardError)")
        let schema = Self.fixtures.appendingPathComponent("TrainingCenterDatabasev2.xsd").path
        if let status = try xmllintStatus(["--noout", "--schema", schema, exported]) { #expect(status == 0) }

        let second = folder.appendingPathComponent("second.sqlite").path
        let importer = try ChildProcess(["import", exported, "--runner", "ann", "--db", second])
        #expect(importer.awaitExit() == 0, "\(importer.standardError)")
        #expect(importer.standardOutput.hasPrefix("\(exported): TCX, 1 activity\n"))
        let copy = try #require(try runs(of: "ann", in: second).first)
        #expect(abs(copy.distance - original.distance) < 0.01)
        #expect(copy.movingTime == original.movingTime && copy.elapsed == original.elapsed)
    }

    /// Each kilometre split on a line of its own, in a column (all of them on one line ran past the edge).
    @Test func kilometreSplitsAreOneALineAndAligned() throws {
        let route = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("tools/routes/10k.gpx").path
        let database = temporaryFolder().appendingPathComponent("splits.sqlite").path
        let importer = try ChildProcess(["import", route, "--runner", "ten", "--db", database])
        #expect(importer.awaitExit() == 0, "\(importer.standardError)")
        let lines = importer.standardOutput.split(separator: "\n").map(String.init)
        let split = #/^  km +(\d+) +\d:\d\d:\d\d   at \d:\d\d:\d\d$/#
        let splits = lines.filter { $0.contains(split) }
        #expect(splits.compactMap { $0.firstMatch(of: split).flatMap { Int($0.1) } } == Array(1...10), "\(lines)")
        // The label column is the one of `distance`, `elapsed` and `badge` above and below.
        #expect(splits.first?.hasPrefix("  km  1      0:05:") == true, "\(splits)")
        #expect(splits.last?.hasPrefix("  km 10      0:05:") == true, "\(splits)")
        #expect(Set(splits.map(\.count)).count == 1, "aligned: \(splits)")
        let run = try #require(try runs(of: "ten", in: database).first)
        #expect(Int(run.distance / 1000) == splits.count)
    }

    @Test func aFileThatNeverEndsIsRefusedAtTheLimit() throws {
        // /dev/zero has no end: it was read until memory ran out.
        let database = temporaryFolder().appendingPathComponent("zero.sqlite").path
        let importer = try ChildProcess(["import", "/dev/zero", "--runner", "zed", "--db", database])
        #expect(importer.awaitExit() == 1)
        #expect(importer.standardError.contains("cannot read /dev/zero: larger than 512 MiB"), "\(importer.standardError)")
    }

    @Test func unknownOptionsAndHelp() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("never.sqlite").path
        for (command, option) in [("import", "--x"), ("import", "-q"), ("export", "--x"), ("export", "--out")] {
            let child = try ChildProcess([command, "1", option, "--db", database])
            #expect(child.awaitExit() == 2)
            #expect(child.standardError.hasPrefix("moonrunner \(command): unknown option '\(option)'\n"))
        }
        // --help wins over everything, even a broken line, and touches nothing.
        for command in ["import", "export"] {
            let child = try ChildProcess([command, Self.stravaRun, "--runner", "ann", "--db", database, "--help", "--bogus"])
            #expect(child.awaitExit() == 0)
            #expect(child.standardOutput.hasPrefix("usage: moonrunner \(command) "))
        }
        #expect(!FileManager.default.fileExists(atPath: database))
    }

    @Test func dashOAndOutputAreTheSameAndAnUnwritableOutputIsAClearError() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("runs.sqlite").path
        #expect(try ChildProcess(["import", Self.stravaRun, "--runner", "ann", "--db", database]).awaitExit() == 0)
        let id = String(try #require(try runs(of: "ann", in: database).first).id)
        let short = folder.appendingPathComponent("short.gpx").path, long = folder.appendingPathComponent("long.gpx").path
        #expect(try ChildProcess(["export", id, "--db", database, "-o", short]).awaitExit() == 0)
        #expect(try ChildProcess(["export", id, "--db", database, "--output", long]).awaitExit() == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: short)) == Data(contentsOf: URL(fileURLWithPath: long)))
        let nowhere = folder.appendingPathComponent("no/such/dir/run.gpx").path
        let failing = try ChildProcess(["export", id, "--db", database, "-o", nowhere])
        #expect(failing.awaitExit() == 1)
        #expect(failing.standardError == "moonrunner export: cannot write \(nowhere): no such file\n")
    }
}
