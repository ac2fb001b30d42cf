import Foundation
import ToolSupport
import Wire

let replaysBenchHelp = """
usage: moonrunner-bench replays [--fixes N] [--replays R] [--speed S] [--seconds T] [--server-bin PATH]

What replays of one long run cost the server in memory. Starts `moonrunner serve` (this build's, or PATH's)
on a fresh temporary SQLite file, makes one run of N fixes over TCP as fast as the server takes them (0.4 s
apart on the run's clock, 1.6 m each), then R anonymous connections each ask `replay:ID S` at once and read
everything they are sent. The server's RSS is sampled every 0.25 s for T seconds of replaying: the peak, less
the RSS before the replays, is what they added.

  --fixes N        fixes in the run (default 200000)
  --replays R      connections replaying it at once (default 40)
  --speed S        replay speed, 1-100 (default 100)
  --seconds T      seconds of replaying measured (default 20)
  --server-bin P   executable to start as `P serve` (default: the moonrunner next to this one)
"""

/// `moonrunner-bench replays`: RSS added by concurrent replays of one long run.
func runReplaysBenchmark(arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(replaysBenchHelp)
        return 0
    }
    let fixes: Int, replays: Int, speed: Int, seconds: Double, binary: String
    do {
        if let unknown = Options.firstUnknownOption(in: arguments, values: ["fixes", "replays", "speed", "seconds", "server-bin"]) {
            throw Options.UsageError(description: "unknown option '\(unknown)'")
        }
        var options = try Options(arguments)
        fixes = try options.number("fixes", default: 200_000)
        replays = try options.number("replays", default: 40)
        speed = try options.number("speed", default: 100)
        seconds = try options.number("seconds", default: 20.0)
        binary = options.string("server-bin") ?? LoadServerProcess.ownExecutable()
        try options.finish()
        guard fixes > 1, replays > 0, (1...100).contains(speed), seconds > 0, options.positional.isEmpty else {
            throw Options.UsageError(description: "--fixes > 1, --replays > 0, --speed 1-100, --seconds > 0")
        }
    } catch {
        printError("moonrunner-bench replays: \(error)\n\(replaysBenchHelp)")
        return 2
    }
    let server: LoadServerProcess
    do {
        server = try LoadServerProcess(binary: binary, host: "127.0.0.1", database: nil)
    } catch {
        printError("moonrunner-bench replays: \(error)")
        return 1
    }
    defer { _ = server.stop() }
    do throws(LoadSetupError) {
        let runID = try makeRun(fixes: fixes, on: server)
        usleep(1_000_000)  // the writes' buffers settle: the baseline is the server at rest with the run stored
        let before = server.residentBytes() ?? 0
        print(String(format: "rss before replays: %.1f MiB", Double(before) / 1_048_576))
        try measureReplays(of: runID, replays: replays, speed: speed, seconds: seconds, on: server, before: before)
        return 0
    } catch {
        printError("moonrunner-bench replays: \(error)")
        return 1
    }
}

/// Sends one run of `fixes` fixes over TCP and stops it; its id.
private func makeRun(fixes: Int, on server: LoadServerProcess) throws(LoadSetupError) -> Int64 {
    let runner = try ReplayBenchClient(host: server.host, port: server.port) {
        $0.hasPrefix("ok:iam") || $0.hasPrefix("end:") || $0.hasPrefix("err:")
    }
    defer { runner.close() }
    try runner.send(Array("iam:replay-bench\n".utf8))
    guard runner.wait(for: "ok:iam", timeout: 10) != nil else { throw LoadSetupError(description: "no ok:iam") }
    let started = LoadClock.monotonicSeconds()
    // Stamps 0.4 s apart from just now: the whole run stays within the filter's 24 h ahead of the clock.
    let first = Date().timeIntervalSince1970.rounded(.down) - 5
    var batch: [UInt8] = []
    for index in 0..<fixes {
        batch.append(contentsOf: "loc:".utf8)
        NumberFormat.append(48.0 + Double(index) * 1.6 / 111_229, decimals: 7, to: &batch)
        batch.append(contentsOf: ",11.5,5,".utf8)
        NumberFormat.append(first + Double(index) * 0.4, decimals: 1, to: &batch)
        batch.append(UInt8(ascii: "\n"))
        if batch.count > 256 * 1024 {
            try runner.send(batch)
            batch.removeAll(keepingCapacity: true)
        }
    }
    try runner.send(batch + Array("stop:\n".utf8))
    guard let end = runner.wait(for: "end:", timeout: 600) else { throw LoadSetupError(description: "no end: for the run") }
    guard let runID = try? RunEndedEvent(event: Event.parse(end)).runID else {
        throw LoadSetupError(description: "not an end: line: \(end)")
    }
    print(String(format: "run %lld: %d fixes sent and stored in %.1f s", runID, fixes, LoadClock.monotonicSeconds() - started))
    return runID
}

/// Starts `replays` replays of the run at once and samples the server's RSS while they go.
private func measureReplays(of runID: Int64, replays: Int, speed: Int, seconds: Double, on server: LoadServerProcess,
                            before: Int) throws(LoadSetupError) {
    var viewers: [ReplayBenchClient] = []
    defer { for viewer in viewers { viewer.close() } }
    for _ in 0..<replays {
        viewers.append(try ReplayBenchClient(host: server.host, port: server.port) {
            $0.hasPrefix("ok:replay") || $0.hasPrefix("err:") || $0.hasPrefix("done:replay")
        })
    }
    let started = LoadClock.monotonicSeconds()
    for viewer in viewers { try viewer.send(Array("replay:\(runID) \(speed)\n".utf8)) }
    var peak = server.residentBytes() ?? 0
    for viewer in viewers {
        // Sampled meanwhile too: the replays' memory may come (and go) before the last one starts.
        var answer: String?
        while answer == nil && LoadClock.monotonicSeconds() - started < 600 {
            answer = viewer.wait(for: "", timeout: 0.25)
            peak = max(peak, server.residentBytes() ?? 0)
        }
        guard let answer, answer.hasPrefix("ok:replay") else {
            throw LoadSetupError(description: "replay:\(runID) answered \(answer ?? "nothing")")
        }
    }
    let allStarted = LoadClock.monotonicSeconds() - started
    while LoadClock.monotonicSeconds() - started < allStarted + seconds {
        usleep(250_000)
        peak = max(peak, server.residentBytes() ?? 0)
    }
    let lines = viewers.map(\.linesReceived)
    print(String(format: "replays: %d at %d×, all answered ok:replay within %.2f s, then %.0f s measured", replays,
                 speed, allStarted, seconds))
    print(String(format: "lines per replay: %d-%d", lines.min() ?? 0, lines.max() ?? 0))
    print(String(format: "rss peak while replaying: %.1f MiB", Double(peak) / 1_048_576))
    print(String(format: "rss added by the replays: %.1f MiB (%.0f KiB a replay)", Double(peak - before) / 1_048_576,
                 Double(peak - before) / 1024 / Double(replays)))
}
