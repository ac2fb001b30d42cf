import ToolSupport
import Broadcaster
import Foundation
import Locking
import MoonRunnerClient
import RunStore
import Wire

let demoHelp = """
usage: moonrunner demo [--duration SECONDS] [options]

The whole product in one command: starts a server in this process (in-memory store), three simulated
runners on different routes at high speed (ann: park, bob: 10k, cat: marathon; each starts again when it
finishes), a fan who cheers now and then, and a live watch view of every runner. Runs until Ctrl-C or the
duration. Other terminals can join in: moonrunner watch '*' --port PORT.

  --duration S   stop after S seconds (default: until Ctrl-C)
  --speed X      how much faster than real time the runners go (default 20)
  --port N       port for the server (default 0: any free port, shown in the heading)
  --http-port N  port for the web page (default 8080, or any free port when 8080 is taken)
"""

/// `moonrunner demo`.
func runDemoCommand(arguments: [String]) -> Int32 {
    var duration: Double?
    var speed = 20.0
    var port: UInt16 = 0
    var httpPort: UInt16?
    do {
        var options = try Options(arguments)
        if options.wantsHelp {
            print(demoHelp)
            return 0
        }
        if options.string("duration") != nil {
            let seconds: Double = try options.number("duration", default: 0)
            guard seconds > 0 else { throw Options.UsageError(description: "--duration must be positive") }
            duration = seconds
        }
        speed = try options.number("speed", default: speed)
        guard speed > 0, speed.isFinite else { throw Options.UsageError(description: "--speed must be positive") }
        port = try options.number("port", default: port)
        httpPort = try options.string("http-port").map { text throws(Options.UsageError) in try parsePort(text, option: "http-port") }
        try options.finish()
        guard options.positional.isEmpty else { throw Options.UsageError(description: "unexpected \(options.positional[0])") }
    } catch {
        printError("moonrunner demo: \(error)\n\n\(demoHelp)")
        return 2
    }
    var configuration = ServerConfiguration()
    configuration.port = port
    configuration.httpPort = httpPort ?? 8080
    let server: Server
    do {
        let store = MemoryRunStore()
        do {
            server = try Server(configuration: configuration, store: store, log: ServerLog(isEnabled: false))
        } catch where httpPort == nil {
            configuration.httpPort = 0  // 8080 is taken (another server?): any free port will do
            server = try Server(configuration: configuration, store: store, log: ServerLog(isEnabled: false))
        }
        try server.start()
        // The heading of a pipe too (a terminal's is redrawn with the view): the port to watch from elsewhere.
        let web = server.httpPort.map { "open http://\(configuration.host):\($0)/ in a browser; " } ?? ""
        print("MoonRunner Live demo: \(web)\(demoServerText(port: server.port))")
        fflush(nil)
    } catch {
        printError("moonrunner demo: cannot start the server: \(error)")
        return 1
    }
    let (finalDuration, finalSpeed) = (duration, speed)
    let status = runBlocking {
        await runDemo(port: server.port, webPort: server.httpPort, duration: finalDuration, speed: finalSpeed)
    }
    server.shutdown()
    return status
}

/// The runners, the fan and the watch view, until the duration ends.
func runDemo(port: UInt16, webPort: UInt16?, duration: Double?, speed: Double) async -> Int32 {
    let cast: [(String, BuiltInRoute, String)] = [("ann", .park, "5:10"), ("bob", .tenK, "5:40"), ("cat", .marathon, "4:50")]
    var tasks: [Task<Void, Never>] = []
    for (index, (name, route, pace)) in cast.enumerated() {
        tasks.append(Task {
            var key: String?
            var lap = UInt64(index)
            while !Task.isCancelled {
                let samples = BuiltInRoute.samples(along: route.path, speed: 1000 / ((try? paceSeconds(pace)) ?? 330))
                var plan = crowd(name: name, key: nil, count: 1, base: samples, noise: 4, seed: lap)[0]
                plan.key = key
                plan.startDelay = Double(index) * speed  // a wall second apart
                let keyBox = Locked<String?>(nil)  // the runner's key, learnt from the simulation's report line
                _ = try? await simulateRun(plan, host: "127.0.0.1", port: port, speed: speed) { line in
                    if let range = line.range(of: "key=") { keyBox.withLock { $0 = String(line[range.upperBound...]) } }
                }
                key = keyBox.withLock { $0 } ?? key
                lap += 3
                try? await Task.sleep(for: .seconds(2))
            }
        })
    }
    tasks.append(Task {
        let fan = MoonRunnerClient(host: "127.0.0.1", port: port)
        defer { fan.close() }
        try? fan.watch(.everyone)
        let cheers = ["Allez !", "Go go go!", "Looking strong!", "To the Moon!", "Hup hup!"]
        var index = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(7))
            _ = try? await fan.cheer(cheers[index % cheers.count])
            index += 1
        }
    })
    let watcher = MoonRunnerClient(host: "127.0.0.1", port: port)
    let web = webPort.map { "web: http://127.0.0.1:\($0)/ · " } ?? ""
    let title = web + demoServerText(port: port)
    let status = await watchLive(client: watcher, target: .everyone, view: WatchView(title: title), duration: duration,
                                 isFinal: { _ in false })
    for task in tasks { task.cancel() }
    return status
}

/// `demo server on 127.0.0.1:PORT (also try: moonrunner watch '*' --port PORT)`: the line-protocol port, in
/// the heading on a terminal and on a pipe.
func demoServerText(port: UInt16) -> String {
    "demo server on 127.0.0.1:\(port) (also try: moonrunner watch '*' --port \(port))"
}
