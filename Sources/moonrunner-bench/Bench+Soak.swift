import ToolSupport
import Foundation
import Reactor
import RunStore

let soakBenchHelp = """
usage: moonrunner-bench soak [--minutes N] [options]

Starts this executable's `serve` on a fresh SQLite file and keeps a steady churn going against it: runners
join, stream, drop the connection or quit or stop, and come back with their key (iam:NAME KEY), resending
what no ack covered; spectators (line and web) come and go; malformed lines are mixed in. Every report
interval it prints the server's RSS and open files. At the end every runner comes back until its fixes are
acked, the server is stopped (SIGTERM), and every acked fix is looked for in the SQLite file it used.

Verdict: PASS when RSS after the first report stays within max(10 %, 8 MiB), the server's files that are not
connections stay within 4, no acked fix is missing, and no connection failed or got an unexpected error.

  --minutes N           minutes of churn (default 5; 30 for the issue's soak; fractions allowed)
  --runners R           runners (default 40)
  --spectators S        line spectators at any time (default 30)
  --web-spectators S    web event streams at any time (default 10)
  --rate N              fixes per second per streaming runner (default 2)
  --malformed P         share of a runner's lines that are malformed, 0...1 (default 0.03)
  --report-every S      seconds between reports (default 60)
  --seed N              seed of the churn (default 13)
  --keep-db PATH        write the server's database to PATH and keep it (default: a temporary file)
  --server-bin PATH     executable to start as `PATH serve` (default: this one)
"""

/// `moonrunner-bench soak`.
func runSoakBenchmark(arguments: [String]) -> Int32 {
    var configuration = SoakConfiguration()
    var keptDatabase: String?
    var serverBinary = LoadServerProcess.ownExecutable()
    do {
        var options = try Options(arguments)
        if options.wantsHelp {
            print(soakBenchHelp)
            return 0
        }
        configuration.minutes = try options.number("minutes", default: configuration.minutes)
        configuration.runners = try options.number("runners", default: configuration.runners)
        configuration.spectators = try options.number("spectators", default: configuration.spectators)
        configuration.webSpectators = try options.number("web-spectators", default: configuration.webSpectators)
        configuration.rate = try options.number("rate", default: configuration.rate)
        configuration.malformedShare = try options.number("malformed", default: configuration.malformedShare)
        configuration.reportInterval = try options.number("report-every", default: configuration.reportInterval)
        configuration.seed = try options.number("seed", default: configuration.seed)
        keptDatabase = options.string("keep-db")
        serverBinary = options.string("server-bin") ?? serverBinary
        try options.finish()
        guard configuration.minutes > 0, configuration.runners > 0, configuration.rate > 0,
              configuration.spectators >= 0, configuration.webSpectators >= 0,
              (0...1).contains(configuration.malformedShare), configuration.reportInterval > 0 else {
            throw Options.UsageError(description: "--minutes, --runners, --rate and --report-every must be positive, "
                                     + "--malformed within 0...1")
        }
    } catch {
        printError("moonrunner-bench soak: \(error)\n\(soakBenchHelp)")
        return 2
    }
    let wanted = configuration.runners + configuration.spectators + configuration.webSpectators + 256
    guard ProcessLimits.raiseOpenFileLimit(to: wanted) >= wanted else {
        printError("moonrunner-bench soak: \(wanted) open files needed")
        return 1
    }
    // A closed stdout (`| head`) must not kill the bench before it stops the server it started.
    signal(SIGPIPE, SIG_IGN)
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("moonrunner-soak-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let database = keptDatabase ?? directory + "/soak.sqlite"

    let server: LoadServerProcess
    let driver: SoakDriver
    do throws(LoadServerProcess.StartError) {
        server = try LoadServerProcess(binary: serverBinary, host: "127.0.0.1", database: database)
    } catch {
        printError("moonrunner-bench soak: \(error)")
        return 1
    }
    do throws(LoadSetupError) {
        driver = try SoakDriver(configuration: configuration, server: server)
    } catch {
        _ = server.stop()
        printError("moonrunner-bench soak: \(error)")
        return 1
    }
    print("soak: \(configuration.runners) runners at \(configuration.rate) fixes/s, \(configuration.spectators) + "
          + "\(configuration.webSpectators) web spectators, \(configuration.minutes) min, seed \(configuration.seed), "
          + "server pid \(server.processID.map(String.init) ?? "?"), load average \(machineLoadAverage())")
    // One line per report as it happens, also when stdout is a file or a pipe.
    driver.run { sample in
        print(soakReportLine(sample))
        fflush(nil)
    }
    let stopped = server.stop()
    let check = checkAcknowledgedFixes(of: driver.runners, in: database)
    let verdict = SoakVerdict(samples: driver.samples, tally: driver.tally, check: check,
                              unexpectedCloses: driver.load.unexpectedCloseCount,
                              firstUnexpectedClose: driver.load.firstUnexpectedCloseReason,
                              shutdownStatus: stopped?.status)
    for line in verdict.lines { print(line) }
    print("verdict: \(verdict.passed ? "PASS" : "FAIL")\(verdict.problems.isEmpty ? "" : " — " + verdict.problems.joined(separator: "; "))")
    return verdict.passed ? 0 : 1
}

/// One report: time, RSS, open files (and how many are this bench's connections), the churn so far.
private func soakReportLine(_ sample: SoakSample) -> String {
    let minutes = String(format: "%5.1f", sample.seconds / 60)
    let rss = sample.residentBytes.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "?"
    let files = sample.openFiles.map(String.init) ?? "?"
    let other = sample.otherFiles.map(String.init) ?? "?"
    let tally = sample.tally
    return "t=\(minutes) min  rss=\(rss)  fds=\(files) (connections \(sample.connections), other \(other))  "
        + "sessions=\(tally.runnerSessions) resumed=\(tally.resumes) drops=\(tally.drops) quits=\(tally.quits) "
        + "stops=\(tally.stops) acked=\(sample.fixesAcknowledged) spectators=\(tally.spectatorSessions)"
        + "+\(tally.webSpectatorSessions)web malformed=\(tally.malformedSent)/answered \(tally.malformedAnswered)"
}

/// What the store holds of the acked fixes.
struct SoakStoreCheck {
    var acknowledged = 0
    var missing = 0
    var firstMissing: String?
    var storedFixes = 0
    var runs = 0
    var error: String?
}

/// Opens the server's SQLite file (after it stopped) and looks for every acked fix among its runner's fixes.
private func checkAcknowledgedFixes(of runners: [SoakRunner], in path: String) -> SoakStoreCheck {
    var check = SoakStoreCheck()
    do {
        let store = try SQLiteRunStore(path: path)
        defer { store.close() }
        for runner in runners {
            var stored = Set<Int64>()
            for run in try store.runs(of: runner.name, offset: 0, limit: 1_000_000) {
                check.runs += 1
                for fix in try store.fixes(ofRun: run.id) {
                    stored.insert(Int64((fix.fix.timestamp * 1e6).rounded()))
                    check.storedFixes += 1
                }
            }
            for micros in runner.acknowledged where !stored.contains(micros) {
                check.missing += 1
                if check.firstMissing == nil { check.firstMissing = "\(runner.name) ts=\(Double(micros) / 1e6)" }
            }
            check.acknowledged += runner.acknowledged.count
        }
    } catch {
        check.error = "\(error)"
    }
    return check
}

/// The figures at the end and whether they pass.
struct SoakVerdict {
    var lines: [String] = []
    var problems: [String] = []
    var passed: Bool { problems.isEmpty }

    init(samples: [SoakSample], tally: SoakTally, check: SoakStoreCheck, unexpectedCloses: Int,
         firstUnexpectedClose: String?, shutdownStatus: Int32?) {
        // The first report (after a minute of churn: caches, SQLite's page cache and the WAL have warmed up)
        // is the baseline; the last one is taken after the wind-down.
        let baseline = samples.count > 2 ? samples[1] : samples[0]
        let last = samples[samples.count - 1]
        if let before = baseline.residentBytes, let after = last.residentBytes {
            let growth = after - before
            let allowed = max(before / 10, 8 << 20)
            lines.append("rss: \(mebibytes(before)) at t=\(minutes(baseline)) min -> \(mebibytes(after)) at the end "
                         + "(\(growth >= 0 ? "+" : "")\(mebibytes(growth)); allowed +\(mebibytes(allowed)))")
            let peak = samples.compactMap(\.residentBytes).max() ?? after
            lines.append("rss peak: \(mebibytes(peak))")
            if growth > allowed { problems.append("RSS grew by \(mebibytes(growth))") }
        } else {
            problems.append("no RSS figures")
        }
        if let before = baseline.otherFiles, let after = last.otherFiles {
            let range = samples.compactMap(\.otherFiles)
            lines.append("fds other than connections: \(before) at t=\(minutes(baseline)) min -> \(after) at the end "
                         + "(min \(range.min() ?? 0), max \(range.max() ?? 0))")
            if after - before > 4 { problems.append("the server's other files grew from \(before) to \(after)") }
        } else {
            problems.append("no open-file figures")
        }
        lines.append("store: \(check.acknowledged) acked fixes, \(check.missing) missing; \(check.storedFixes) fixes "
                     + "in \(check.runs) runs")
        if let error = check.error { problems.append("cannot read the store: \(error)") }
        if check.missing > 0 { problems.append("\(check.missing) acked fixes missing (first \(check.firstMissing ?? "?"))") }
        if check.acknowledged == 0 { problems.append("no fix was acked") }
        lines.append("churn: \(tally.runnerSessions) runner sessions (\(tally.resumes) resumed), \(tally.drops) drops, "
                     + "\(tally.quits) quits, \(tally.stops) stops, \(tally.runsEnded) end: lines; "
                     + "\(tally.spectatorSessions) + \(tally.webSpectatorSessions) web spectator sessions, "
                     + "\(tally.spectatorEvents) events to them")
        lines.append("malformed: \(tally.malformedSent) sent, \(tally.malformedAnswered) answered with err:")
        lines.append("unexpected: \(tally.unexpectedErrors) errors\(tally.firstUnexpectedError.map { " (first: \($0))" } ?? ""), "
                     + "\(unexpectedCloses) closes\(firstUnexpectedClose.map { " (first: \($0))" } ?? ""), "
                     + "\(tally.connectFailures) failed connects\(tally.firstConnectFailure.map { " (first: \($0))" } ?? "")")
        if tally.unexpectedErrors > 0 { problems.append("\(tally.unexpectedErrors) unexpected err: lines") }
        if unexpectedCloses > 0 { problems.append("\(unexpectedCloses) connections closed by the server") }
        if tally.connectFailures > 0 { problems.append("\(tally.connectFailures) connects failed") }
        lines.append("server shutdown: exit status \(shutdownStatus.map(String.init) ?? "?")")
        if shutdownStatus != 0 { problems.append("the server exited with status \(shutdownStatus.map(String.init) ?? "?")") }
    }
}

private func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

private func minutes(_ sample: SoakSample) -> String { String(format: "%.1f", sample.seconds / 60) }

/// `/proc/loadavg`'s three figures: other work competing for the cores.
private func machineLoadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}
