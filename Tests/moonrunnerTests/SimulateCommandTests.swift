import Broadcaster
import Foundation
import MoonRunnerTestSupport
@testable import moonrunner
import MoonRunnerClient
import RunStore
import Testing
import Wire

/// `moonrunner simulate` as README shows it: a real process against a server, checked in the server's store.
@Suite(.mayBlock) struct SimulateCommandTests {
    /// The repository's folder (for tools/routes).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func aBuiltInRouteBecomesOneSavedRunAndTheKeyIsPrinted() async throws {
        let store = MemoryRunStore()
        try await withServer(store: store) { server in
            let simulate = try ChildProcess(["simulate", "--route", "park", "--speed", "2000", "--name", "sim",
                                             "--seed", "7", "--port", String(server.port)])
            #expect((await exitStatus(simulate, timeout: 60)) == 0, "\(simulate.standardError)")
            let output = simulate.standardOutput
            let key = try #require(output.split(separator: "\n").first { $0.hasPrefix("sim key=") })
            #expect(key.dropFirst("sim key=".count).count == 32)
            #expect(output.contains("sim: ") && output.contains("saved as run 1"))

            store.flush()
            let runs = try store.runs(of: "sim", offset: 0, limit: 10)
            #expect(runs.count == 1)
            let run = try #require(runs.first)
            #expect(run.status == .saved)
            #expect(run.distance > 4300 && run.distance < 4900, "one lap of the park: \(run.distance) m")
            let fixes = try store.fixes(ofRun: run.id)
            let timestamps = fixes.map(\.fix.timestamp)
            #expect(fixes.count > 1400 && Set(timestamps).count == fixes.count, "each fix stored once")
            #expect(timestamps == timestamps.sorted() && timestamps.last! - timestamps.first! == Double(fixes.count - 1))
            // Noise is realistic: accuracy about 1.5 × 3-5 m, and the engine keeps almost every fix.
            let accuracies = fixes.map(\.fix.accuracy)
            #expect(accuracies.min()! > 2 && accuracies.max()! < 12)
            #expect(fixes.filter { !$0.isAccepted }.count < fixes.count / 50)
        }
    }

    /// Piped, `simulate` shows a line per kilometre between the key and the summary (it showed nothing for
    /// minutes); `--quiet` shows neither.
    @Test func pipedProgressIsALinePerKilometreAndQuietHasNone() async throws {
        // The child reads the same locale variables: a line per mile where miles are the unit.
        let unit = RunFormatter().unit.rawValue
        try await withServer { server in
            let simulate = try ChildProcess(["simulate", "--route", "park", "--speed", "2000", "--name", "pip",
                                             "--seed", "3", "--port", String(server.port)])
            let quiet = try ChildProcess(["simulate", "--route", "park", "--speed", "2000", "--name", "qui",
                                          "--seed", "3", "--port", String(server.port), "--quiet"])
            #expect((await exitStatus(simulate, timeout: 60)) == 0, "\(simulate.standardError)")
            #expect((await exitStatus(quiet, timeout: 60)) == 0, "\(quiet.standardError)")

            let lines = simulate.standardOutput.split(separator: "\n").map(String.init)
            let park = 4.5 / (unit == "km" ? 1 : 1.609)  // one lap of the park, 4.5 km
            let splits = (1...Int(park)).map { "pip: \($0) \(unit) in " }
            #expect(lines.count == splits.count + 2, "key, splits, summary: \(lines)")
            #expect(lines.first?.hasPrefix("pip key=") == true)
            for (line, start) in zip(lines.dropFirst(), splits) {
                #expect(line.hasPrefix(start), "\(line)")
                #expect(line.contains(#/ in 0:\d\d:\d\d, \d+ badges? \(latest [^()]+\)$/#), "\(line)")
            }
            #expect(lines.last?.contains("saved as run") == true)

            let quietLines = quiet.standardOutput.split(separator: "\n")
            #expect(quietLines.count == 2 && quietLines[0].hasPrefix("qui key=") && quietLines[1].hasPrefix("qui: "),
                    "\(quietLines)")
        }
    }

    /// On a terminal, one line shows the distance, time and badges so far, redrawn in place.
    @Test(.enabled(if: WatchCommandTests.tmuxPath != nil, "tmux is not installed: the TTY line is not checked"))
    func onATerminalProgressIsOneLineRedrawnInPlace() async throws {
        try await withServer { server in
            let session = "moonrunner-simulate-\(UUID().uuidString.prefix(8))"
            let command = "'\(moonrunnerExecutable.path)' simulate --route park --speed 50 --name tty "
                + "--port \(server.port)"
            try WatchCommandTests.tmux(["new-session", "-d", "-s", session, "-x", "100", "-y", "30", command])
            defer { _ = try? WatchCommandTests.tmux(["kill-session", "-t", session]) }
            // tmux has no "screen changed" event: poll the pane until two different distances have been shown.
            let file = temporaryFolder().appendingPathComponent("pane.txt")
            let live = #/tty: (\d+[.,]\d\d) (km|mi) in 0:\d\d:\d\d, \d+ badges? \(latest [^()]+\)/#
            var distances: Set<String> = []
            var screen = ""
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, distances.count < 2 {
                screen = try WatchCommandTests.capture(session, into: file)
                if let match = screen.firstMatch(of: live) { distances.insert(String(match.1)) }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(distances.count == 2, "\(screen)")
            // In place: the key's line and the one progress line, nothing scrolled.
            let shown = screen.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(shown.count == 2 && shown[0].hasPrefix("tty key="), "\(screen)")
            #expect(shown.last.map { $0.contains(live) } == true, "\(screen)")
        }
    }

    @Test func aCrowdRunsUnderNumberedNames() async throws {
        let store = MemoryRunStore()
        try await withServer(store: store) { server in
            let simulate = try ChildProcess(["simulate", "--route", "park", "--speed", "3000", "--name", "crowd",
                                             "--runners", "3", "--quiet", "--port", String(server.port)])
            #expect((await exitStatus(simulate, timeout: 60)) == 0, "\(simulate.standardError)")
            store.flush()
            for name in ["crowd-1", "crowd-2", "crowd-3"] {
                #expect(try store.runs(of: name, offset: 0, limit: 5).count == 1, "\(name)")
                #expect(simulate.standardOutput.contains("\(name) key="))
            }
            // Shifted paths: the crowd does not share positions.
            let first = try store.fixes(ofRun: store.runs(of: "crowd-1", offset: 0, limit: 1)[0].id)
            let third = try store.fixes(ofRun: store.runs(of: "crowd-3", offset: 0, limit: 1)[0].id)
            #expect(first[0].fix.latitude != third[0].fix.latitude)
        }
    }

    @Test func aGPXRouteWithoutTimesIsRunAtThePace() async throws {
        let store = MemoryRunStore()
        let gpx = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/gpxpy-cerknicko-without-times.gpx").path
        try await withServer(store: store) { server in
            let simulate = try ChildProcess(["simulate", "--gpx", gpx, "--pace", "6:00", "--speed", "3000",
                                             "--name", "planner", "--port", String(server.port)])
            #expect((await exitStatus(simulate, timeout: 60)) == 0, "\(simulate.standardError)")
            store.flush()
            let run = try #require(try store.runs(of: "planner", offset: 0, limit: 1).first)
            #expect(run.status == .saved && run.distance > 1000)
            // 6:00 per km along the route, give or take the smoothing.
            let pace = run.elapsed / run.distance * 1000
            #expect(abs(pace - 360) < 25, "pace \(pace) s/km")
        }
    }

    @Test func aGPXFileIsReplayedWithItsOwnTiming() async throws {
        let store = MemoryRunStore()
        let gpx = Self.repository.appendingPathComponent("tools/routes/park.gpx").path
        let points = try GPXImport.tracks(from: Data(contentsOf: URL(fileURLWithPath: gpx)))[0]
        try await withServer(store: store) { server in
            let simulate = try ChildProcess(["simulate", "--gpx", gpx, "--speed", "3000", "--name", "gpx",
                                             "--port", String(server.port)])
            #expect((await exitStatus(simulate, timeout: 60)) == 0, "\(simulate.standardError)")
            store.flush()
            let run = try #require(try store.runs(of: "gpx", offset: 0, limit: 1).first)
            let fixes = try store.fixes(ofRun: run.id)
            #expect(fixes.count == points.count)
            // Without --noise a GPX is replayed exactly (7 decimals on the wire).
            #expect(abs(fixes[100].fix.latitude - points[100].latitude) < 1e-7)
            #expect(fixes[100].fix.timestamp - fixes[0].fix.timestamp == points[100].timestamp - points[0].timestamp)
        }
    }

    @Test func theBuiltInRoutesMatchTheShippedGPXFiles() async throws {
        let folder = temporaryFolder()
        for route in ["park", "10k", "marathon"] {
            let file = folder.appendingPathComponent("\(route).gpx").path
            let write = try ChildProcess(["simulate", "--route", route, "--write-gpx", file])
            #expect((await exitStatus(write, timeout: 30)) == 0)
            let shipped = Self.repository.appendingPathComponent("tools/routes/\(route).gpx")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(contentsOf: shipped), "\(route)")
        }
        let tenK = try GPXImport.tracks(from: Data(contentsOf: Self.repository.appendingPathComponent("tools/routes/10k.gpx")))[0]
        // 10 km (drawn 0.6% longer, see BuiltInRoute.overrun) at 5:30 /km: 3320 s, one point a second.
        #expect(abs(tenK.count - Int((10_000 * BuiltInRoute.overrun * 0.33).rounded())) <= 2)
    }

    @Test(arguments: ["simulate", "watch", "coach", "runs", "badges", "demo"])
    func everyClientToolPrintsHelp(tool: String) async throws {
        let help = try ChildProcess([tool, "--help"])
        #expect((await exitStatus(help, timeout: 30)) == 0)
        #expect(help.standardOutput.contains("usage: moonrunner \(tool)"))
        if tool != "demo" { #expect(help.standardOutput.contains("--port N")) }
        let bad = try ChildProcess([tool, "--no-such-option", "x"])
        #expect((await exitStatus(bad, timeout: 30)) == 2)
        #expect(bad.standardError.contains("unknown option '--no-such-option'"), "\(bad.standardError)")
    }
}
