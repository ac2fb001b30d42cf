import ToolSupport
import Foundation
import Reactor
import RunStore

let soakBenchHelp = """
usage: moonrunner-bench soak [--minutes N] [options]

Starts this executable's `serve` on a fresh SQLite file and keeps a steady churn going against it: runners
join, stream, drop the connection or quit or stop, and come back with their key (iam:NAME KEY), resending
what no ack covered; spectators (line and web) come and go; malformed lines are mixed in. Beside it, on the
same server, a hostile mix (--hostile on): cheer floods (msg: flat out and at 150/s, POST /runners/NAME/cheers),
connections that never read (GET /events?watch=*, watch:*; 4 KiB receive buffers), replays of the saved runs
(replay:ID 100, half never read), and guessing (iam:NAME KEY, watch:NAME TOKEN, /osmand?id= with wrong ones,
for the normal runners' names); each reconnects when the server closes it. Every report interval it prints
the server's RSS and open files, and the hostile kinds' counts. At the end the hostile mix stops, every runner
comes back until its fixes are acked, the server is stopped (SIGTERM), and every acked fix is looked for in the
SQLite file it used.

Verdict: PASS when no acked fix is missing; RSS is bounded (sampled every 5 s: the last third's peak within
max(10 %, 16 MiB) of the first third's, and no sample above the output budget + 200 MiB); the server's files
that are not connections stay within 4; no normal runner was refused (err:wrong_key, err:busy, err:flood…, or
no ok:iam within 30 s) or disconnected by the server; the normal spectators never went 10 s without an event;
no guess was taken; and no normal connection failed or got an unexpected error.

  --minutes N           minutes of churn (default 5; 30 for the issue's soak; fractions allowed)
  --runners R           runners (default 40)
  --spectators S        line spectators at any time (default 30)
  --web-spectators S    web event streams at any time (default 10)
  --rate N              fixes per second per streaming runner (default 2)
  --malformed P         share of a runner's lines that are malformed, 0...1 (default 0.03)
  --report-every S      seconds between reports (default 60)
  --seed N              seed of the churn (default 13)
  --hostile on|off      the hostile mix beside the normal one (default on)
  --floods N            line connections cheering, half flat out, half at 150/s; and N/2 posting cheers over
                        HTTP at 50/s (default 4)
  --stalled N           connections that never read, 4 of 5 event streams, 1 of 5 watch:* (default 150)
  --replayers N         connections replaying saved runs at 100x, half never reading (default 4)
  --guessers N          connections guessing at 5/s, in turn keys, share tokens, device tokens, for the
                        names the runners claimed (default 12: over 100 wrong a minute, refused at once)
  --output-budget MB    the server's --output-budget (default 8: the stalled readers pass it once the kernel's
                        send buffers, ~2 MB each, are full)
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
        var hostile = HostileConfiguration()
        hostile.floods = try options.number("floods", default: hostile.floods)
        hostile.stalled = try options.number("stalled", default: hostile.stalled)
        hostile.replayers = try options.number("replayers", default: hostile.replayers)
        hostile.guessers = try options.number("guessers", default: hostile.guessers)
        switch options.string("hostile") ?? "on" {
        case "on": configuration.hostile = hostile
        case "off": configuration.hostile = nil
        case let other: throw Options.UsageError(description: "--hostile: on or off, not \(other)")
        }
        configuration.outputBudget = try options.number("output-budget", default: configuration.outputBudget)
        keptDatabase = options.string("keep-db")
        serverBinary = options.string("server-bin") ?? serverBinary
        try options.finish()
        guard configuration.minutes > 0, configuration.runners > 0, configuration.rate > 0,
              configuration.spectators >= 0, configuration.webSpectators >= 0,
              (0...1).contains(configuration.malformedShare), configuration.reportInterval > 0,
              configuration.outputBudget > 0, hostile.floods >= 0, hostile.stalled >= 0, hostile.replayers >= 0,
              hostile.guessers >= 0 else {
            throw Options.UsageError(description: "--minutes, --runners, --rate, --report-every and --output-budget must "
                                     + "be positive, --malformed within 0...1, the hostile counts 0 or more")
        }
    } catch {
        printError("moonrunner-bench soak: \(error)\n\(soakBenchHelp)")
        return 2
    }
    let hostileConnections = configuration.hostile.map { $0.floods * 2 + $0.stalled + $0.replayers + $0.guessers } ?? 0
    let wanted = configuration.runners + configuration.spectators + configuration.webSpectators + hostileConnections + 256
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
        server = try LoadServerProcess(binary: serverBinary, host: "127.0.0.1", database: database,
                                       serveOptions: ["--output-budget", "\(configuration.outputBudget)"])
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
          + "server pid \(server.processID.map(String.init) ?? "?"), output budget \(configuration.outputBudget) MiB, "
          + "load average \(machineLoadAverage())")
    if let hostile = configuration.hostile {
        print("hostile: \(hostile.floods) cheer floods (+\(hostile.floods == 0 ? 0 : max(1, hostile.floods / 2)) over HTTP), "
              + "\(hostile.stalled) stalled readers, \(hostile.replayers) replayers, \(hostile.guessers) guessers")
    }
    // One line per report as it happens, also when stdout is a file or a pipe.
    driver.run { sample in
        print(soakReportLine(sample))
        fflush(nil)
    }
    // The log goes with the server's temporary folder: read it first.
    let shed = server.logLines(containing: ": over the output budget")
    let stopped = server.stop()
    let check = checkAcknowledgedFixes(of: driver.runners, in: database)
    var verdict = SoakVerdict(samples: driver.samples, tally: driver.tally, check: check,
                              unexpectedCloses: driver.load.unexpectedCloseCount,
                              firstUnexpectedClose: driver.load.firstUnexpectedCloseReason,
                              shutdownStatus: stopped?.status)
    verdict.judgeResidentMemory(driver.residentSamples, minutes: configuration.minutes,
                                outputBudget: configuration.outputBudget)
    verdict.judgeNormalClients(driver: driver)
    if let hostile = driver.hostile {
        verdict.judgeHostile(hostile, shedByBudget: shed, settleSeconds: driver.settleSeconds)
    }
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
        + (sample.hostile.isEmpty ? "" : "\n" + hostileReportLine(sample.hostile))
}

/// The hostile mix so far, all kinds together.
private func hostileReportLine(_ counts: [HostileCounts]) -> String {
    let sum = { (value: (HostileCounts) -> Int) in counts.reduce(0) { $0 + value($1) } }
    return "         hostile: \(sum(\.connections)) connections (\(sum(\.reconnects)) reconnects), \(sum(\.sent)) sent, "
        + "\(sum(\.refusals)) refused/busy, \(sum(\.closedByServer)) closed by the server"
}

/// What the store holds of the acked fixes.
struct SoakStoreCheck {
    /// Fixes the runners made, how many times they were written (resends too), and those no ack covered.
    var made = 0
    var written = 0
    var unacknowledged = 0
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
            check.made += runner.fixesMade
            check.written += runner.linesSent
            check.unacknowledged += runner.unacknowledgedCount
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
        if let before = baseline.otherFiles, let after = last.otherFiles {
            let range = samples.compactMap(\.otherFiles)
            lines.append("fds other than connections: \(before) at t=\(minutes(baseline)) min -> \(after) at the end "
                         + "(min \(range.min() ?? 0), max \(range.max() ?? 0))")
            if after - before > 4 { problems.append("the server's other files grew from \(before) to \(after)") }
        } else {
            problems.append("no open-file figures")
        }
        lines.append("fixes: \(check.made) sent (\(check.written) lines with the resends), \(check.acknowledged) acked, "
                     + "\(check.unacknowledged) never acked")
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

extension SoakVerdict {
    /// RSS is bounded when the last third's peak is within max(10 %, 16 MiB) of the first third's (the first
    /// third fills caches, SQLite's page cache and the stalled readers' backlog up to the output budget), and no
    /// sample is above the output budget + 200 MiB.
    mutating func judgeResidentMemory(_ samples: [(seconds: Double, bytes: Int)], minutes: Double, outputBudget: Int) {
        guard let first = samples.first, let last = samples.last, let peak = samples.map(\.bytes).max() else {
            problems.append("no RSS figures")
            return
        }
        let third = minutes * 60 / 3
        let early = samples.filter { $0.seconds <= third }.map(\.bytes).max() ?? first.bytes
        let late = samples.filter { $0.seconds >= 2 * third }.map(\.bytes).max() ?? last.bytes
        let allowed = max(early / 10, 16 << 20)
        let cap = (outputBudget + 200) << 20
        lines.append("rss: start \(mebibytes(first.bytes)), peak \(mebibytes(peak)), end \(mebibytes(last.bytes)) "
                     + "(\(samples.count) samples 5 s apart); peak of the first third \(mebibytes(early)), of the last "
                     + "\(mebibytes(late)) (allowed +\(mebibytes(allowed))); cap \(mebibytes(cap))")
        if late - early > allowed {
            problems.append("RSS grew: the last third peaked \(mebibytes(late - early)) above the first")
        }
        if peak > cap { problems.append("RSS peaked at \(mebibytes(peak)), above the output budget + 200 MiB") }
    }

    /// No normal runner refused or disconnected by the server; the normal spectators' events kept flowing.
    mutating func judgeNormalClients(driver: SoakDriver) {
        let tally = driver.tally
        lines.append("normal runners: \(tally.runnerRefusals) refused\(tally.firstRunnerRefusal.map { " (first: \($0))" } ?? ""), "
                     + "\(tally.runnerDisconnects) disconnected by the server"
                     + "\(tally.firstRunnerDisconnect.map { " (first: \($0))" } ?? ""); slowest ok:iam "
                     + String(format: "%.2f s", tally.slowestIdentify) + ", \(tally.slowIdentifies) took 1 s or more")
        if tally.runnerRefusals > 0 { problems.append("\(tally.runnerRefusals) times a normal runner was refused") }
        if tally.runnerDisconnects > 0 {
            problems.append("\(tally.runnerDisconnects) normal runners' connections closed by the server")
        }
        let latency = driver.spectatorPaceLatency
        let gap = driver.longestSpectatorGap
        lines.append("normal spectators: \(tally.spectatorEvents) events, at most " + String(format: "%.2f s", gap)
                     + " without one while the churn ran; pace ts→arrival p50 \(latency.percentile(0.5) / 1000) ms, "
                     + "p99 \(latency.percentile(0.99) / 1000) ms, max \(latency.maximum / 1000) ms (\(latency.count) paces)")
        if tally.spectatorEvents == 0 || gap >= 10 {
            problems.append("the normal spectators' events stopped for " + String(format: "%.1f s", gap))
        }
    }

    /// The hostile kinds' counts; no guess may be taken.
    mutating func judgeHostile(_ mix: SoakHostileMix, shedByBudget: Int, settleSeconds: Double) {
        lines.append("hostile, per kind (answers by kind; 'slowed': 0.2 s or more; 'refused': too many wrong ones):")
        lines += mix.reportLines()
        lines.append("server: \(shedByBudget) connections closed over the output budget; the hostile connections closed "
                     + "after \(String(format: "%.1f", settleSeconds)) s")
        let taken = [HostileKind.guessKey, .guessToken, .guessDevice].reduce(0) { sum, kind in
            sum + mix.counts[kind.rawValue].answers.filter { $0.key.hasPrefix("ok:") || $0.key.hasPrefix("2") }
                .values.reduce(0, +)
        }
        if taken > 0 { problems.append("\(taken) wrong keys or tokens were taken") }
    }
}

private func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

private func minutes(_ sample: SoakSample) -> String { String(format: "%.1f", sample.seconds / 60) }

/// `/proc/loadavg`'s three figures: other work competing for the cores.
private func machineLoadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}
