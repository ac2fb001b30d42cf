import ToolSupport
import Foundation
import MoonRunnerClient
import RunCore
import RunStore
import Synchronization
import Wire

let simulateHelp = """
usage: moonrunner simulate [--route park|10k|marathon | --gpx FILE] [options]

Replays a route as a runner (or a crowd) against a server: one GPS fix per second of run time, starting now,
sent at real time or faster. Ends the run with stop: when the route ends, prints the end summary and exits 0.
A new name's key is printed once: pass it back with --key to run as that name again. While it runs it shows
distance, time and badges: on a terminal one line kept up to date (the runner farthest on, for a crowd),
else a line per kilometre (mile, in a locale that runs in miles) of each runner.

  --host ADDR       server address (default 127.0.0.1)
  --port N          server port (default 4242)
  --route R         built-in route: park (one lap of Regent's Park,
                    4.5 km), 10k (10.0 km), marathon (42.3 km) (default park); each measures
                    at least its name
  --gpx FILE        replay the first track of a GPX file with its own timing instead
  --name NAME       runner name (default runner-NNNN)
  --key KEY         the name's key, if it is already claimed
  --runners N       a crowd NAME-1 ... NAME-N, starting 2 s (run time) apart on slightly shifted paths
  --speed X         X times faster than real time: fixes stay 1 s apart in run time (default 1)
  --pace M:SS       running pace per km on built-in routes and GPX routes without times (default 5:30)
  --noise [METRES]  GPS error sigma, correlated (AR(1)); 0 for exact positions (default 4; with --gpx 0,
                    or 4 when --noise is given alone)
  --seed N          random seed for noise and pace variation (default: random)
  --write-gpx FILE  write the route as GPX (no noise) and exit, without connecting
  --quiet           no progress while it runs: print only keys and end summaries
"""

/// Everything a simulated runner needs.
struct RunnerPlan: Sendable {
    var name: String
    var key: String?
    var samples: [TrackSample]
    /// Run-time seconds before this runner starts (crowds start staggered).
    var startDelay: Double
}

/// `moonrunner simulate …`.
func runSimulateCommand(arguments: [String]) -> Int32 {
    var host = "", port: UInt16 = 0, speed = 1.0, quiet = false
    var plans: [RunnerPlan] = []
    do {
        var options = try Options(arguments, switches: ["quiet"], optionalValues: ["noise"])
        if options.wantsHelp {
            print(simulateHelp)
            return 0
        }
        (host, port) = try options.serverAddress()
        speed = try options.number("speed", default: speed)
        guard speed > 0, speed.isFinite else { throw Options.UsageError(description: "--speed must be positive") }
        let routeName = options.string("route")
        let gpx = options.string("gpx")
        let name = options.string("name") ?? "runner-\(Int.random(in: 1000...9999))"
        let key = options.string("key")
        let runners: Int = try options.number("runners", default: 1)
        let pace = try paceSeconds(options.string("pace") ?? "5:30")
        // `--noise` alone turns on the default 4 m, also for GPX replays.
        let noise: Double = try options.number("noise", default: gpx == nil || options.isPresent("noise") ? 4.0 : 0.0)
        let seed: UInt64 = try options.number("seed", default: UInt64.random(in: 0...UInt64.max))
        let writeGPX = options.string("write-gpx")
        quiet = options.flag("quiet")
        try options.finish()
        guard options.positional.isEmpty else { throw Options.UsageError(description: "unexpected \(options.positional[0])") }
        guard (1...1000).contains(runners) else { throw Options.UsageError(description: "--runners must be 1-1000") }
        guard Command.isValidName(runners == 1 ? name : "\(name)-\(runners)") else {
            throw Options.UsageError(description: "bad name \(name): 1-32 of A-Z a-z 0-9 _ . -")
        }
        guard routeName == nil || gpx == nil else { throw Options.UsageError(description: "give --route or --gpx, not both") }
        let base: [TrackSample]
        if let gpx {
            base = try gpxSamples(file: gpx, pace: pace)
        } else {
            guard let route = BuiltInRoute(rawValue: routeName ?? "park") else {
                throw Options.UsageError(description: "unknown route \(routeName ?? ""): park, 10k or marathon")
            }
            base = BuiltInRoute.samples(along: route.path, speed: 1000 / pace)
        }
        if let writeGPX {
            let document = gpxDocument(name: routeName ?? "route", samples: base, start: 1_735_714_800)
            do {
                try FileAccess.write(Data(document.utf8), to: writeGPX)
            } catch {
                throw Options.UsageError(description: error.description)
            }
            print("wrote \(base.count) points to \(writeGPX)")
            return 0
        }
        plans = crowd(name: name, key: runners == 1 ? key : nil, count: runners, base: base, noise: noise, seed: seed)
    } catch {
        printError("moonrunner simulate: \(error)\n\n\(simulateHelp)")
        return 2
    }
    let (finalHost, finalPort, finalSpeed, finalPlans) = (host, port, speed, plans)
    let progress = SimulateProgress(style: .forStandardOutput(quiet: quiet))
    return runBlocking {
        await simulateAll(finalPlans, host: finalHost, port: finalPort, speed: finalSpeed, progress: progress)
    }
}

/// Runs every plan at once, showing their progress; 0 when every run ended with its summary.
func simulateAll(_ plans: [RunnerPlan], host: String, port: UInt16, speed: Double,
                 progress: SimulateProgress) async -> Int32 {
    await withTaskGroup(of: Bool.self) { group -> Int32 in
        for plan in plans {
            group.addTask {
                do {
                    let end = try await simulateRun(plan, host: host, port: port, speed: speed, progress: progress,
                                                    report: { progress.say($0) })
                    progress.end(plan.name, summary: endSummary(end))
                    return true
                } catch {
                    progress.warn("moonrunner simulate: \(plan.name): \(error)")
                    return false
                }
            }
        }
        var allGood = true
        for await good in group { allGood = allGood && good }
        return allGood ? 0 : 1
    }
}

/// Seconds per km of `M:SS`.
func paceSeconds(_ text: String) throws(Options.UsageError) -> Double {
    let parts = text.split(separator: ":")
    guard parts.count == 2, let minutes = Int(parts[0]), let seconds = Int(parts[1]), seconds < 60,
          minutes * 60 + seconds > 0 else {
        throw Options.UsageError(description: "--pace takes M:SS per km, e.g. 5:30")
    }
    return Double(minutes * 60 + seconds)
}

/// The first track of a GPX file, timed from its first point; a track without times (a planned route) is
/// timed at `pace` seconds per km along its length.
func gpxSamples(file: String, pace: Double) throws -> [TrackSample] {
    let data: Data
    do {
        data = try FileAccess.read(file)
    } catch {
        throw Options.UsageError(description: error.description)
    }
    let tracks = try GPXImport.tracks(from: data, requiringTimes: false)
    guard let track = tracks.first, let first = track.first else {
        throw Options.UsageError(description: "\(file) has no track points")
    }
    guard track.contains(where: { $0.timestamp.isNaN }) else {
        return track.map { TrackSample(latitude: $0.latitude, longitude: $0.longitude, accuracy: $0.accuracy,
                                       time: $0.timestamp - first.timestamp) }
    }
    // One sample per whole second: points closer together than that are dropped (a fix a second, as a phone).
    var along = 0.0
    var previous = first.coordinate
    var samples: [TrackSample] = []
    for point in track {
        along += Geodesy.distance(from: previous, to: point.coordinate)
        previous = point.coordinate
        let time = (along * pace / 1000).rounded()
        if let last = samples.last, time <= last.time { continue }
        samples.append(TrackSample(latitude: point.latitude, longitude: point.longitude, accuracy: point.accuracy,
                                   time: time))
    }
    return samples
}

/// The runners of a crowd (or the one runner): names, noise, small pace and path differences, staggered starts.
func crowd(name: String, key: String?, count: Int, base: [TrackSample], noise: Double, seed: UInt64) -> [RunnerPlan] {
    var random = SeededRandom(seed: seed)
    return (0..<count).map { index in
        var samples = base
        if count > 1 {
            // A few metres to the side and ±5 % pace, so a crowd does not run in lockstep.
            let shift = Double(index) * 1.5 / 111_320
            let stretch = Double.random(in: 0.95...1.05, using: &random)
            samples = samples.map { TrackSample(latitude: $0.latitude + shift, longitude: $0.longitude,
                                                accuracy: $0.accuracy, time: ($0.time * stretch).rounded()) }
            samples = samples.enumerated().filter { $0.offset == 0 || $0.element.time != samples[$0.offset - 1].time }.map(\.element)
        }
        let sigma = noise > 0 ? noise * Double.random(in: 0.75...1.25, using: &random) : 0
        samples = addNoise(sigma: sigma, to: samples, random: &random)
        return RunnerPlan(name: count == 1 ? name : "\(name)-\(index + 1)", key: key, samples: samples,
                          startDelay: Double(index) * 2)
    }
}

/// Runs one plan: join (printing a new key), send each fix on time (scaled by `speed`), stop, return the end.
/// The run's own events go to `progress` when there is one.
func simulateRun(_ plan: RunnerPlan, host: String, port: UInt16, speed: Double,
                 reconnect: ReconnectPolicy = ReconnectPolicy(maximumAttempts: 8), progress: SimulateProgress? = nil,
                 report: @escaping @Sendable (String) -> Void) async throws -> RunEndedEvent {
    let clock = ContinuousClock()
    if plan.startDelay > 0 { try await Task.sleep(for: .seconds(plan.startDelay / speed)) }
    let client = MoonRunnerClient(configuration: ClientConfiguration(host: host, port: port, reconnect: reconnect))
    defer { client.close() }
    let watcher = Task {
        for await event in client.events() {
            guard case .state(.waitingToReconnect(let attempt, let delay, let reason)) = event else {
                progress?.take(event)
                continue
            }
            let warning = "\(plan.name): no connection to \(host):\(port): \(reason); retry \(attempt) in "
                + "\(NumberFormat.string(delay, decimals: 1)) s (Ctrl-C to stop)"
            if let progress { progress.warn(warning) } else { printError(warning) }
        }
    }
    defer { watcher.cancel() }
    let key = try await client.join(name: plan.name, key: plan.key)
    if key != plan.key { report("\(plan.name) key=\(key)") }
    // Timestamps start now (the server refuses a stale start); at speed > 1 they run ahead of the clock.
    let start = Date().timeIntervalSince1970.rounded(.down)
    let wallStart = clock.now
    var next = 0
    let samples = plan.samples
    while next < samples.count {
        let runTime = Double((clock.now - wallStart).components.seconds)
            + Double((clock.now - wallStart).components.attoseconds) / 1e18
        let due = runTime * speed
        while next < samples.count, samples[next].time <= due {
            let sample = samples[next]
            try client.send(Fix(latitude: sample.latitude, longitude: sample.longitude, accuracy: sample.accuracy,
                                timestamp: start + sample.time))
            next += 1
        }
        guard next < samples.count else { break }
        let wait = (samples[next].time - due) / speed
        try await Task.sleep(for: .seconds(max(0.001, wait)))
    }
    return try await client.stop()
}

/// `ann: 4.41 km in 0:24:30 (5:33 /km), saved as run 17`.
func endSummary(_ end: RunEndedEvent, formatter: RunFormatter = RunFormatter()) -> String {
    var text = "\(end.runner): \(formatter.distance(end.distance)) in \(formatter.duration(end.elapsed)) "
        + "(\(formatter.pace(end.pace)))"
    text += end.saved ? ", saved as run \(end.runID)" : ", not saved (\(end.reason.rawValue))"
    if end.filteredCount > 0 { text += ", \(end.filteredCount) fixes filtered" }
    return text
}

/// Runs async work from the synchronous command dispatcher and returns its exit status.
func runBlocking(_ body: @escaping @Sendable () async -> Int32) -> Int32 {
    let result = Mutex<Int32>(1)
    let done = DispatchSemaphore(value: 0)
    Task {
        let status = await body()
        result.withLock { $0 = status }
        done.signal()
    }
    done.wait()
    return result.withLock { $0 }
}
