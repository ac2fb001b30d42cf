import ToolSupport
import Foundation
import MoonRunnerClient
import Wire

let watchHelp = """
usage: moonrunner watch NAME|'*' [options]

Follows a runner (or every runner: '*') live: distance, time, current and average pace, a bar to the next
badge ("1.2 km until Mars"), badges as they are won and cheers. Redraws in place on a terminal; prints one
line per happening (and a pace line a second per runner) when piped. Ctrl-C to stop.

  --host ADDR      server address (default 127.0.0.1)
  --port N         server port (default 4242)
  --token T        a private runner's share token
  --until-end      exit after the runner's run ends (with '*': after the first run that ends)
  --duration S     exit after S seconds
  --units km|mi    distance unit (default from the locale)
"""

let coachHelp = """
usage: moonrunner coach NAME|'*' [options]

Badge alerts for a runner (or every runner: '*'), one line each, with the run's start and end, and the
coach alerts: off pace / back on pace (for a runner with a goal time) and checkpoints (--every), and
what the runner's phone says: an SOS (a line starting with !!! SOS, with the time, the position and a map
link), its battery level and a low battery.

  --host ADDR      server address (default 127.0.0.1)
  --port N         server port (default 4242)
  --every M        a checkpoint line every M metres (100-100000)
  --token T        a private runner's share token
  --until-end      exit after the runner's run ends (with '*': after the first run that ends)
  --duration S     exit after S seconds
  --units km|mi    distance unit (default from the locale)
"""

/// The options `watch` and `coach` share.
struct FollowOptions {
    var host = ""
    var port: UInt16 = 0
    var target = WatchTarget.everyone
    var untilEnd = false
    var duration: Double?
    var formatter = RunFormatter()
    /// `coach --every M`.
    var every: Double?
    /// `--token T`: a private runner's share token.
    var token: String?

    /// Reads the options; nil after printing help.
    init?(_ arguments: [String], help: String) throws(Options.UsageError) {
        var options = try Options(arguments, switches: ["until-end"])
        if options.wantsHelp {
            print(help)
            return nil
        }
        (host, port) = try options.serverAddress()
        untilEnd = options.flag("until-end")
        if options.string("duration") != nil {
            let seconds: Double = try options.number("duration", default: 0)
            guard seconds > 0 else { throw Options.UsageError(description: "--duration must be positive") }
            duration = seconds
        }
        formatter = try unitFormatter(options.string("units"))
        if options.string("every") != nil {
            let metres: Double = try options.number("every", default: 0)
            guard Command.Limits.checkpointInterval.contains(metres) else {
                throw Options.UsageError(description: "--every is 100-100000 metres")
            }
            every = metres
        }
        token = options.string("token")
        try options.finish()
        guard options.positional.count == 1 else { throw Options.UsageError(description: "give one NAME, or '*'") }
        target = WatchTarget(parsing: options.positional[0])
        if case .runner(let name) = target, !Command.isValidName(name) {
            throw Options.UsageError(description: "bad name \(name): 1-32 of A-Z a-z 0-9 _ . -")
        }
    }

    /// True when `event` ends what `--until-end` waits for.
    func isFinal(_ event: ClientEvent) -> Bool {
        guard untilEnd, case .ended(let end) = event else { return false }
        if case .runner(let name) = target { return end.runner == name }
        return true
    }
}

/// One coach alert as a line: `ann: checkpoint 2.00 km at 9:58 (4:59 /km)`, `ann: off pace at 5:30 /km …`,
/// `ann: battery low, 14%`; an SOS stands out on a line of its own, with when, where and a map link:
/// `!!! SOS ann at 2024-11-30T07:25:00Z, 48.85661, 2.35222 https://www.openstreetmap.org/?mlat=…` (then the run).
func alertLine(_ alert: AlertEvent, formatter: RunFormatter) -> String {
    let at = "\(formatter.distance(alert.distance)) at \(formatter.duration(alert.elapsed))"
    let battery = alert.battery.map { ", battery \(NumberFormat.string($0, decimals: 0))%" } ?? ""
    switch alert.alertKind {
    case .checkpoint:
        return "\(alert.runner): checkpoint \(at)" + (alert.pace.map { " (\(formatter.pace($0)))" } ?? "") + battery
    case .offPace, .backOnPace:
        let what = alert.alert == "off_pace" ? "off pace" : "back on pace"
        let off = alert.off.map { " \($0 >= 0 ? "+" : "")\(NumberFormat.string($0, decimals: 1))%" } ?? ""
        return "\(alert.runner): \(what) at \(formatter.pace(alert.pace)) (target \(formatter.pace(alert.target))\(off)), \(at)"
            + battery
    case .sos:
        let when = alert.timestamp.flatMap { Double($0) }.map { ISODate.string(unixSeconds: $0) } ?? alert.timestamp ?? "?"
        let position: String
        if let latitude = alert.latitude, let longitude = alert.longitude {
            position = "\(NumberFormat.string(latitude, decimals: 5)), \(NumberFormat.string(longitude, decimals: 5)) "
                + PhoneAlert.mapLink(latitude: latitude, longitude: longitude)
        } else {
            position = "position withheld (privacy zone: ask \(alert.runner) for a share link)"
        }
        let run = alert.distance > 0 || alert.elapsed > 0 ? "\n!!! \(alert.runner) had run \(at)\(battery)" : ""
        return "!!! SOS \(alert.runner) at \(when), \(position)\(run)"
    case .offCourse:
        return "\(alert.runner): off the course, \(formatter.distance(alert.off ?? 0)) from it, \(at)"
    case .backOnCourse:
        return "\(alert.runner): back on the course, \(at)"
    case .battery:
        return "\(alert.runner): battery \(NumberFormat.string(alert.battery, decimals: 0))%"
    case .batteryLow:
        return "\(alert.runner): battery low, \(NumberFormat.string(alert.battery, decimals: 0))%"
    case nil:
        return "\(alert.runner): \(alert.alert) \(at)"
    }
}

/// A formatter for `--units km|mi` (nil: the locale's).
func unitFormatter(_ units: String?) throws(Options.UsageError) -> RunFormatter {
    guard let units else { return RunFormatter() }
    guard let unit = RunFormatter.DistanceUnit(rawValue: units) else {
        throw Options.UsageError(description: "--units takes km or mi")
    }
    return RunFormatter(unit: unit)
}

/// Runs `watch` or `coach`, which read the same options: after `--help`, exits 0; after a usage error, prints
/// it with the command's help and exits 2; else runs `body` to its exit status.
private func runFollowCommand(_ command: String, arguments: [String], help: String,
                              _ body: @escaping @Sendable (FollowOptions) async -> Int32) -> Int32 {
    let follow: FollowOptions
    do {
        guard let parsed = try FollowOptions(arguments, help: help) else { return 0 }
        follow = parsed
    } catch {
        printError("moonrunner \(command): \(error)\n\n\(help)")
        return 2
    }
    return runBlocking { await body(follow) }
}

/// `moonrunner watch NAME|*`.
func runWatchCommand(arguments: [String]) -> Int32 {
    runFollowCommand("watch", arguments: arguments, help: watchHelp) { follow in
        let client = MoonRunnerClient(host: follow.host, port: follow.port)
        let server = "\(follow.host):\(follow.port)"
        let title = "watching \(follow.target.text) on \(server)"
        return await watchLive(client: client, target: follow.target, token: follow.token,
                               view: WatchView(title: title, server: server, formatter: follow.formatter),
                               duration: follow.duration, isFinal: follow.isFinal)
    }
}

/// Shows `target`'s events until `isFinal`, the duration, or the client giving up; closes the client.
func watchLive(client: MoonRunnerClient, target: WatchTarget, token: String? = nil, view: WatchView,
               duration: Double?, isFinal: @escaping @Sendable (ClientEvent) -> Bool) async -> Int32 {
    var view = view
    var renderer = WatchRenderer()
    let events = client.events()
    do {
        if let token, case .runner(let name) = target {
            try client.watch(name, token: token)
        } else {
            try client.watch(target)
        }
    } catch {
        printError("moonrunner watch: \(error)")
        return 2
    }
    let timer = duration.map { seconds in
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            client.close()
        }
    }
    renderer.begin()
    var status: Int32 = 0
    for await event in events {
        let line = view.apply(event)
        renderer.show(view, after: event, line: line)
        if isFinal(event) {
            renderer.show(view, after: event, line: nil, force: true)
            break
        }
        if case .state(.failed) = event { status = 1 }
    }
    timer?.cancel()
    client.close()
    return status
}

/// `moonrunner coach NAME|*`: one line per run start, badge and end.
func runCoachCommand(arguments: [String]) -> Int32 {
    runFollowCommand("coach", arguments: arguments, help: coachHelp) { follow in
        let client = MoonRunnerClient(host: follow.host, port: follow.port)
        let events = client.events()
        do {
            if let token = follow.token {
                // A private runner's coach: the token goes with the subscription.
                guard case .runner(let name) = follow.target else { throw MoonRunnerClientError.invalidArgument("--token needs a NAME") }
                try client.coach(name, token: token, every: follow.every)
            } else {
                try client.coach(follow.target, every: follow.every)
            }
        } catch {
            printError("moonrunner coach: \(error)")
            return 2
        }
        let timer = follow.duration.map { seconds in
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                client.close()
            }
        }
        let server = "\(follow.host):\(follow.port)"
        var view = WatchView(title: "coaching", server: server, formatter: follow.formatter)
        var badges = BadgeLineMerger()
        var status: Int32 = 0
        func emit(_ line: String?) {
            guard let line else { return }
            print(line)
            fflush(nil)
        }
        // The tiers one crossing wins (silver, gold, best) arrive back to back: a short tick closes the line.
        for await input in merge(events, ticks: .milliseconds(100)) {
            guard case .event(let event) = input else {
                emit(badges.flush(olderThan: .milliseconds(100), formatter: follow.formatter))
                continue
            }
            if case .badge(let badge) = event {
                _ = view.apply(event)
                emit(badges.add(badge, formatter: follow.formatter))
                continue
            }
            switch event {
            case .ok(let ok) where ok.what == "coach":
                let whom = follow.target == .everyone ? "every runner" : follow.target.text
                emit("coaching \(whom) on \(server): waiting for runs (Ctrl-C to stop)")
            case .runStarted, .ended, .error, .state(.waitingToReconnect), .state(.failed), .state(.connected):
                emit(badges.flush(formatter: follow.formatter))
                emit(view.apply(event))
            case .alert(let alert):
                emit(badges.flush(formatter: follow.formatter))
                emit(alertLine(alert, formatter: follow.formatter))
            default:
                break
            }
            if follow.isFinal(event) { break }
            if case .state(.failed) = event { status = 1 }
        }
        emit(badges.flush(formatter: follow.formatter))
        timer?.cancel()
        client.close()
        return status
    }
}
