import ToolSupport
import Foundation
import Reactor

let loadBenchHelp = """
usage: moonrunner-bench load [options]

Drives runners, spectators and idle connections on loopback against a server (by default one it starts:
this executable's `serve --port 0` on a fresh temporary SQLite file, stopped with SIGTERM at the end) and
prints one `key: value` per line and a one-line summary per scenario.

  --scenario NAME       live | flat | flat-replay | idle | web | osmand | long-race | all (each in turn, 10 s each); flags
                        override
                        live:   --runners 2000 --rate 1 --spectators 4000 --duration 30  (p99 < 5 ms, no loss)
                        flat:   --runners 50 --spectators 50 --flat-out --duration 10    (>= 200,000 fixes/s)
                        flat-replay: flat with --fix-interval 1 (phone-clock stamps 1 s apart)
                        idle:   --idle 10000                                             (< 4 KiB per connection)
                        web:    --runners 200 --rate 1 --web-spectators 10000 --duration 30
                                (browsers on GET /events: p99 < 50 ms, no run/split/badge/end event lost,
                                < 8 KiB of server memory per stream)
                        long-race: --runners 2000 --flat-out --fix-interval 1 --fixes 14400 --duration 1800
                                (a 4-hour run each, replayed fast; runs stay live: server RSS < 256 MiB at
                                the end, bytes per live run reported)
  --runners R           connections that send iam:load-N and stream fixes (default 0)
  --spectators S        connections that watch a runner, spread evenly (default 0)
  --web-spectators S    event streams (GET /events?watch=NAME on the HTTP port), spread evenly (default 0)
  --devices N           phone apps posting OsmAnd positions (GET /osmand), each the next after its answer;
                        --scenario osmand: 100 devices keep-alive, then 100 with a connection per position
  --device-close        devices open a new connection per position (no keep-alive)
  --backlog-devices N   after the devices: N phones, a fresh device token each, send a queue (a run recorded
                        offline: positions 4 s apart, the newest current) one position per request, each the
                        next after its answer; then N others the whole queue in one POST /osmand JSON
                        `location` array. Positions/s stored (each run's GPX export counted) and answer times.
                        --scenario osmand: 10 (its keep-alive part)
  --backlog-size N      positions in each backlog phone's queue (default 1000)
  --rate N              fixes per second per runner (default 1)
  --flat-out            runners write as fast as the server takes, --pipeline fixes unacknowledged at most
  --pipeline N          unacknowledged fixes per runner when flat out (default 256)
  --duration S          seconds of streaming (default 10)
  --fix-interval S      stamp fixes with a phone clock that starts now and advances S seconds per fix
                        (a recorded run replayed fast); latency then comes from this process's send log.
                        Default: each fix's ts is the wall clock when it is sent
  --fixes N             each runner sends N fixes in all and stays live (no stop:); streaming ends when all
                        are acknowledged (or after --duration)
  --idle N              connections that ping once and stay silent (default 0)
  --db PATH             the started server's database (default: a temporary SQLite file; :memory: for none)
  --server-bin PATH     executable to start as `PATH serve` (default: this one)
  --host ADDR           server address (default 127.0.0.1)
  --port P              use a server already listening on P instead of starting one
  --server-pid PID      with --port: the server's process id, for RSS and CPU figures
  --prefix WORD         runner names are WORD-N (default load)
  --spectator-port P    spectators connect to P (another node of a cluster) while runners use --port
"""

/// `moonrunner-bench load`.
func runLoadBenchmark(arguments: [String]) -> Int32 {
    let plan: LoadPlan
    do {
        plan = try LoadPlan(arguments: arguments)
    } catch {
        printError("moonrunner-bench load: \(error)\n\(loadBenchHelp)")
        return 2
    }
    guard !plan.wantsHelp else {
        print(loadBenchHelp)
        return 0
    }
    let connections = plan.scenarios.map { $0.configuration.runners + $0.configuration.spectators + $0.configuration.webSpectators + $0.configuration.idle }
    let wanted = (connections.max() ?? 0) + 256
    let limit = ProcessLimits.raiseOpenFileLimit(to: wanted)
    if limit < wanted {
        printError("moonrunner-bench load: only \(limit) open files allowed, \(wanted) needed")
        return 1
    }
    for (number, scenario) in plan.scenarios.enumerated() {
        if number > 0 { print("") }
        guard runLoadScenario(scenario, plan: plan) else { return 1 }
    }
    return 0
}

/// One scenario: start (or reach) the server, drive the load, stop the server, print the report.
private func runLoadScenario(_ scenario: LoadScenario, plan: LoadPlan) -> Bool {
    let server: LoadServerProcess
    if let port = plan.externalPort {
        server = LoadServerProcess(existingHost: plan.host, port: port, processID: plan.externalProcessID)
    } else {
        do {
            let load = scenario.configuration
            // What the load opens, and room for the connections the devices and probes open and close.
            let limits = (line: load.runners + load.spectators + load.idle + 256,
                          http: load.webSpectators + load.devices + load.backlogDevices + 256)
            server = try LoadServerProcess(binary: plan.serverBinary, host: plan.host, database: plan.database,
                                           limits: limits)
        } catch {
            printError("moonrunner-bench load: \(scenario.name): \(error)")
            return false
        }
    }
    let outcome: Result<LoadResult, LoadSetupError>
    do throws(LoadSetupError) {
        let driver = try LoadDriver(configuration: scenario.configuration, server: server)
        outcome = .success(try driver.run())
    } catch {
        outcome = .failure(error)
    }
    let stopped = server.stop()
    switch outcome {
    case .failure(let error):
        printError("moonrunner-bench load: \(scenario.name): setup failed: \(error)")
        return false
    case .success(let result):
        let report = LoadReport(scenario: scenario, result: result, shutdown: stopped,
                                slowClientLogLines: server.logLines(containing: "slow client"))
        for (key, value) in report.lines { print("\(key): \(value)") }
        print("summary: \(report.summary)")
        return true
    }
}

/// A named load with the target it is judged against (if any).
struct LoadScenario {
    /// What the issue expects of a scenario.
    enum Target {
        /// p99 pace latency below this many milliseconds and nothing lost.
        case latencyAndNoLoss(p99Milliseconds: Double)
        /// At least this many fixes per second in total.
        case throughput(fixesPerSecond: Double)
        /// At most this many server bytes per idle connection.
        case memoryPerConnection(bytes: Int)
        /// Server RSS below this many bytes at the end, every fix acknowledged (the runs still live).
        case memoryAtEnd(bytes: Int)
        /// Web spectators: p99 pace latency below the limit, no run/split/badge/end event lost, and at most
        /// this many server bytes per event stream.
        case web(p99Milliseconds: Double, bytesPerStream: Int)
    }

    /// `live`, `flat`, `idle` or `custom`.
    var name: String
    /// The load.
    var configuration: LoadConfiguration
    /// The target, nil for a custom load.
    var target: Target?
}

/// The command line turned into scenarios to run and a server to run them against.
struct LoadPlan {
    var wantsHelp = false
    var scenarios: [LoadScenario] = []
    var host = "127.0.0.1"
    var externalPort: UInt16?
    var externalProcessID: Int32?
    var serverBinary = LoadServerProcess.ownExecutable()
    var database: String?

    init(arguments: [String]) throws(Options.UsageError) {
        var options = try Options(arguments, switches: ["flat-out", "device-close"])
        if options.wantsHelp {
            wantsHelp = true
            return
        }
        host = options.string("host") ?? host
        if let text = options.string("port") {
            guard let port = UInt16(text) else { throw Options.UsageError(description: "--port: not a port: \(text)") }
            externalPort = port
        }
        if let text = options.string("server-pid") {
            guard let pid = Int32(text) else { throw Options.UsageError(description: "--server-pid: not a pid: \(text)") }
            externalProcessID = pid
        }
        serverBinary = options.string("server-bin") ?? serverBinary
        database = options.string("db")

        let scenarioName = options.string("scenario") ?? "custom"
        var base: [LoadScenario]
        switch scenarioName {
        case "live": base = [Self.live(duration: 30)]
        case "flat": base = [Self.flat(duration: 10)]
        case "idle": base = [Self.idle()]
        case "flat-replay": base = [Self.flat(duration: 10, replay: true)]
        case "web": base = [Self.web(duration: 30)]
        case "long-race": base = [Self.longRace()]
        case "osmand": base = [Self.osmAnd(keepAlive: true), Self.osmAnd(keepAlive: false)]
        case "all": base = [Self.live(duration: 10), Self.flat(duration: 10), Self.flat(duration: 10, replay: true),
                            Self.idle()]
        case "custom": base = [LoadScenario(name: "custom", configuration: LoadConfiguration(), target: nil)]
        default:
            throw Options.UsageError(description: "--scenario: live, flat, flat-replay, idle, web, osmand, long-race or all, not \(scenarioName)")
        }
        // Explicit flags override every scenario's preset.
        let runners: Int? = try options.optionalNumber("runners")
        let spectators: Int? = try options.optionalNumber("spectators")
        let webSpectators: Int? = try options.optionalNumber("web-spectators")
        let devices: Int? = try options.optionalNumber("devices")
        let deviceClose = options.flag("device-close")
        let backlogDevices: Int? = try options.optionalNumber("backlog-devices")
        let backlogSize: Int? = try options.optionalNumber("backlog-size")
        let idle: Int? = try options.optionalNumber("idle")
        let rate: Double? = try options.optionalNumber("rate")
        let duration: Double? = try options.optionalNumber("duration")
        let pipeline: Int? = try options.optionalNumber("pipeline")
        let fixInterval: Double? = try options.optionalNumber("fix-interval")
        let fixes: Int? = try options.optionalNumber("fixes")
        let flatOut = options.flag("flat-out")
        let prefix = options.string("prefix")
        var spectatorPort: UInt16?
        if let text = options.string("spectator-port") {
            guard let port = UInt16(text) else { throw Options.UsageError(description: "--spectator-port: not a port: \(text)") }
            spectatorPort = port
        }
        try options.finish()
        if flatOut && rate != nil { throw Options.UsageError(description: "--rate and --flat-out exclude each other") }
        for index in base.indices {
            var configuration = base[index].configuration
            configuration.runners = runners ?? configuration.runners
            configuration.spectators = spectators ?? configuration.spectators
            configuration.webSpectators = webSpectators ?? configuration.webSpectators
            if let devices {
                configuration.devices = devices
                configuration.runners = max(configuration.runners, devices)
            }
            if deviceClose { configuration.deviceKeepAlive = false }
            // The backlog phase belongs to the keep-alive osmand load (or a custom one), not to every scenario.
            if let backlogDevices, configuration.backlogDevices > 0 || base[index].name == "custom" {
                configuration.backlogDevices = backlogDevices
            }
            configuration.backlogSize = backlogSize ?? configuration.backlogSize
            configuration.idle = idle ?? configuration.idle
            configuration.duration = duration ?? configuration.duration
            configuration.pipeline = pipeline ?? configuration.pipeline
            configuration.namePrefix = prefix ?? configuration.namePrefix
            configuration.spectatorPort = spectatorPort ?? configuration.spectatorPort
            configuration.fixInterval = fixInterval ?? configuration.fixInterval
            configuration.fixesPerRunner = fixes ?? configuration.fixesPerRunner
            if let rate {
                configuration.rate = rate
                configuration.flatOut = false
            }
            if flatOut { configuration.flatOut = true }
            guard configuration.runners >= 0, configuration.spectators >= 0, configuration.idle >= 0,
                  configuration.rate > 0, configuration.duration > 0, configuration.pipeline > 0,
                  (configuration.fixesPerRunner ?? 1) > 0, configuration.backlogDevices >= 0,
                  configuration.backlogSize > 0,
                  (configuration.fixInterval ?? 1) >= 1e-6 else {
                throw Options.UsageError(
                    description: "counts must be >= 0; rate, duration, pipeline, fix interval, backlog size > 0")
            }
            let connections = configuration.runners + configuration.spectators + configuration.idle
            guard connections + configuration.backlogDevices > 0 else {
                throw Options.UsageError(description: "nothing to do: give --runners, --idle or --scenario")
            }
            base[index].configuration = configuration
        }
        scenarios = base
    }

    /// 2,000 runners at 1 fix/s, 4,000 line-protocol spectators.
    private static func live(duration: Double) -> LoadScenario {
        var configuration = LoadConfiguration.oneFixPerSecond(runners: 2000, duration: duration)
        configuration.spectators = 4000
        return LoadScenario(name: "live", configuration: configuration, target: .latencyAndNoLoss(p99Milliseconds: 5))
    }

    private static func flat(duration: Double, replay: Bool = false) -> LoadScenario {
        var configuration = LoadConfiguration()
        if replay { configuration.fixInterval = 1 }
        configuration.runners = 50
        configuration.spectators = 50
        configuration.flatOut = true
        configuration.duration = duration
        return LoadScenario(name: replay ? "flat-replay" : "flat", configuration: configuration,
                            target: .throughput(fixesPerSecond: 200_000))
    }

    /// A whole race day's live runs in memory: 2,000 runners each send 14,400 fixes (a 4-hour run at 1 Hz,
    /// replayed flat out with a phone clock 1 s per fix) and stay live; the server's RSS at the end must stay
    /// under 256 MiB however long the runs are.
    private static func longRace() -> LoadScenario {
        var configuration = LoadConfiguration()
        configuration.runners = 2000
        configuration.flatOut = true
        configuration.fixInterval = 1
        configuration.fixesPerRunner = 14_400
        configuration.duration = 1800
        configuration.drainTimeout = 60
        return LoadScenario(name: "long-race", configuration: configuration, target: .memoryAtEnd(bytes: 256 << 20))
    }

    /// 100 phone apps posting OsmAnd positions as fast as each gets its answers, on keep-alive connections or
    /// a new connection per position; after the keep-alive ones, 10 phones each send a 1,000-position queue,
    /// one position per request, then 10 others theirs in one batch.
    private static func osmAnd(keepAlive: Bool) -> LoadScenario {
        var configuration = LoadConfiguration()
        configuration.runners = 100
        configuration.devices = 100
        configuration.deviceKeepAlive = keepAlive
        if keepAlive { configuration.backlogDevices = 10 }
        configuration.duration = 10
        return LoadScenario(name: keepAlive ? "osmand" : "osmand-close", configuration: configuration, target: nil)
    }

    /// 10,000 browsers on the event stream, 200 runners at 1 fix/s.
    private static func web(duration: Double) -> LoadScenario {
        var configuration = LoadConfiguration.oneFixPerSecond(runners: 200, duration: duration)
        configuration.webSpectators = 10_000
        return LoadScenario(name: "web", configuration: configuration,
                            target: .web(p99Milliseconds: 50, bytesPerStream: 8192))
    }

    private static func idle() -> LoadScenario {
        var configuration = LoadConfiguration()
        configuration.idle = 10_000
        return LoadScenario(name: "idle", configuration: configuration, target: .memoryPerConnection(bytes: 4096))
    }
}

extension LoadConfiguration {
    /// `runners` each sending a fix a second for `duration` seconds, as phones do in a race.
    static func oneFixPerSecond(runners: Int, duration: Double) -> LoadConfiguration {
        var configuration = LoadConfiguration()
        configuration.runners = runners
        configuration.rate = 1
        configuration.duration = duration
        return configuration
    }
}

extension Options {
    /// A numeric option, or nil when absent.
    mutating func optionalNumber<T: LosslessStringConvertible>(_ name: String) throws(UsageError) -> T? {
        guard let text = string(name) else { return nil }
        guard let value = T(text) else { throw UsageError(description: "--\(name): not a valid number: \(text)") }
        return value
    }
}
