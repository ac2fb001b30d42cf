import Foundation
import RunCore
import Reactor

/// What a soak run does; every field is a flag of `moonrunner-bench soak`.
struct SoakConfiguration: Sendable {
    /// Minutes of churn.
    var minutes = 5.0
    /// Runners (each connected or between sessions at any time).
    var runners = 40
    /// Spectators on the line protocol connected at any time (each leaves after a while, a new one comes).
    var spectators = 30
    /// Spectators on the web event stream connected at any time.
    var webSpectators = 10
    /// Fixes per second per streaming runner.
    var rate = 2.0
    /// Seconds a runner streams per session, at random within this range.
    var sessionSeconds = 8.0...30.0
    /// Seconds between a runner's sessions.
    var offlineSeconds = 0.5...4.0
    /// Seconds a spectator stays.
    var spectatorSeconds = 3.0...20.0
    /// Chance that a line a runner sends is a malformed one instead of its next fix.
    var malformedShare = 0.03
    /// Seconds between two reports of the server's RSS and open files.
    var reportInterval = 60.0
    /// Seed of the churn's choices.
    var seed: UInt64 = 13
    /// Runner names are `PREFIX-N`.
    var namePrefix = "soak"
    /// The hostile mix run beside the normal one, nil for none.
    var hostile: HostileConfiguration? = HostileConfiguration()
    /// The server's `--output-budget` in MiB: small enough that the hostile mix's stalled readers pass it. Each
    /// first fills the kernel's send buffer (about 2 MB on loopback, within a minute or two), then holds the
    /// 64 KiB high-water mark and a little more (past it paces are merged and cheers dropped).
    var outputBudget = 8
}

/// One report line: the server's resident memory and open files, and what the bench had open then.
struct SoakSample {
    var seconds: Double
    var residentBytes: Int?
    var openFiles: Int?
    /// Connections this bench had open at that moment (each is one of the server's files).
    var connections: Int
    var tally: SoakTally
    var fixesAcknowledged: Int
    /// The hostile kinds' counts so far (empty without the hostile mix).
    var hostile: [HostileCounts]

    /// The server's files that are not one of this bench's connections (listening sockets, epoll, the
    /// database, logs…): what must stay flat.
    var otherFiles: Int? { openFiles.map { $0 - connections } }
}

/// Drives the churn on the load driver's epoll loop in this thread (see ``SoakRunner``): runners join, stream,
/// drop or stop or quit, and come back with their key; spectators come and go; malformed lines mixed in; the
/// hostile mix (``SoakHostileMix``) beside them until the churn ends.
final class SoakDriver {
    let configuration: SoakConfiguration
    let load: LoadDriver
    let server: LoadServerProcess
    private(set) var runners: [SoakRunner] = []
    private var spectators: [SoakSpectator] = []
    var tally = SoakTally()
    private(set) var samples: [SoakSample] = []
    /// The hostile mix, nil when off.
    private(set) var hostile: SoakHostileMix?
    /// The server's RSS every 5 s (seconds since the start, bytes), and after the wind-down.
    private(set) var residentSamples: [(seconds: Double, bytes: Int)] = []
    /// Latency of the `pace` events the normal spectators got (their `ts` to their arrival).
    private(set) var spectatorPaceLatency = LatencyHistogram()
    /// The longest the normal spectators together went without an event while the churn ran (seconds).
    private(set) var longestSpectatorGap = 0.0
    private var lastSpectatorEvent: Double?
    /// Seconds the server took after the churn to close what the hostile mix left (``settle()``).
    private(set) var settleSeconds = 0.0
    private var random: SeededRandom
    private var winding = false
    private var started = 0.0

    /// Lines a runner may send that the server must answer with one `err:` and otherwise ignore (and
    /// `" \t"`, a blank line, which it ignores silently: protocol.md §1).
    static let malformedLines: [(line: [UInt8], answered: Bool)] = [
        (Array("loc:48.1,11.5,5\n".utf8), true),
        (Array("loc:91,11.5,5,1764000000\n".utf8), true),
        (Array("loc:48.1,11.5,nan,1764000000\n".utf8), true),
        (Array("hello\n".utf8), true),
        (Array("fly:away\n".utf8), true),
        (Array("stop:later\n".utf8), true),
        (Array("watch:no such name\n".utf8), true),
        (Array("iam:someone-else\n".utf8), true),
        ([0x6D, 0x73, 0x67, 0x3A, 0xC3, 0x28, 0x0A], true),  // msg: with invalid UTF-8
        (Array("ping:\u{0}\n".utf8), true),
        (Array(repeating: UInt8(ascii: "x"), count: 5000) + [0x0A], true),  // over 4096 bytes
        (Array(" \t\r\n".utf8), false),
    ]

    init(configuration: SoakConfiguration, server: LoadServerProcess) throws(LoadSetupError) {
        self.configuration = configuration
        self.server = server
        load = try LoadDriver(configuration: LoadConfiguration(), server: server)
        random = SeededRandom(seed: configuration.seed)
        runners = (0..<configuration.runners).map { SoakRunner(index: $0, prefix: configuration.namePrefix) }
        if let hostileConfiguration = configuration.hostile {
            hostile = SoakHostileMix(configuration: hostileConfiguration, load: load, server: server,
                                     runnerNames: runners.map(\.name), seed: configuration.seed &+ 1)
        }
    }

    /// Runs the churn for the configured minutes, sampling every report interval (and printing each sample
    /// through `report`), then brings every runner back until its fixes are acked and closes everything.
    func run(report: @escaping (SoakSample) -> Void) {
        started = LoadClock.monotonicSeconds()
        for (index, runner) in runners.enumerated() {
            // Spread the first connections over the first seconds.
            runner.phase = .offline(until: started + Double(index) * 0.05)
        }
        let end = started + configuration.minutes * 60
        samples.append(sample())
        report(samples[0])
        var nextReport = started + configuration.reportInterval
        var nextResident = started
        let ticker = load.loop.schedule(every: 0.01) { [unowned self] in
            let now = LoadClock.monotonicSeconds()
            tick(now: now)
            if now >= nextResident {
                nextResident += 5
                noteResident(now: now)
            }
            if now >= nextReport {
                nextReport += configuration.reportInterval
                samples.append(sample())
                report(samples[samples.count - 1])
            }
            if now >= end { load.loop.stop() }
        }
        load.loop.run()
        load.loop.cancel(ticker)
        hostile?.stop()
        windDown()
        settle()
        noteResident(now: LoadClock.monotonicSeconds())
        samples.append(sample())
        report(samples[samples.count - 1])
        closeEveryone()
    }

    // MARK: Churn

    private func tick(now: Double) {
        for runner in runners { step(runner, now: now) }
        if !winding {
            hostile?.tick(now: now)
            if let last = lastSpectatorEvent { longestSpectatorGap = max(longestSpectatorGap, now - last) }
        }
        spectators.removeAll { spectator in
            if spectator.state == .closed { return true }
            guard now >= spectator.leavesAt else { return false }
            if !spectator.isWeb && random.chance(0.5) { spectator.send(Array("unwatch:*\n".utf8)) }
            spectator.close(reason: "leaves", expected: true)
            return true
        }
        guard !winding else { return }
        let lineSpectators = spectators.filter { !$0.isWeb }.count
        if lineSpectators < configuration.spectators { addSpectator(web: false, now: now) }
        if spectators.count - lineSpectators < configuration.webSpectators { addSpectator(web: true, now: now) }
    }

    private func step(_ runner: SoakRunner, now: Double) {
        if let connection = runner.connection, connection.state == .closed {
            // Closed by the server (counted by the load driver as unexpected): come back later.
            runner.connection = nil
            runner.phase = .offline(until: now + 1)
        }
        switch runner.phase {
        case .offline(let until):
            if now >= until && (!winding || runner.unacknowledgedCount > 0) { connect(runner) }
        case .identifying:
            if now - runner.identifyingSince > 30, let connection = runner.connection {
                tally.noteRunnerRefused("\(runner.name): no ok:iam within 30 s")
                disconnect(runner, connection, now: now)
            }
        case .streaming(let until):
            guard let connection = runner.connection else { return }
            if now >= until && !winding {
                endSession(of: runner, connection: connection, now: now)
                return
            }
            guard now >= runner.nextFixAt, !connection.hasPendingOutput else { return }
            runner.nextFixAt = max(runner.nextFixAt + 1 / configuration.rate, now - 1)
            if !winding && random.chance(configuration.malformedShare) {
                let malformed = Self.malformedLines[random.below(Self.malformedLines.count)]
                tally.malformedSent += 1
                if malformed.answered { connection.pendingMalformed += 1 }
                connection.send(malformed.line)
            }
            if !winding { connection.send(runner.nextFix()) }
        case .draining(let deadline):
            guard let connection = runner.connection else { return }
            if runner.unacknowledgedCount == 0 || now >= deadline {
                connection.send(Array("stop:\n".utf8))
                runner.phase = .stopping(deadline: now + 10)
            }
        case .stopping(let deadline):
            if now >= deadline, let connection = runner.connection {
                tally.noteUnexpected("\(runner.name): no end: within 10 s of stop:")
                disconnect(runner, connection, now: now)
            }
        }
    }

    /// A session ends one of three ways: the connection drops (the run stays open: the next `iam:` resumes
    /// it), `quit:` (likewise), or the acks are awaited and `stop:` ends the run.
    private func endSession(of runner: SoakRunner, connection: SoakRunnerConnection, now: Double) {
        let choice = random.below(10)
        if choice < 5 {
            tally.drops += 1
            disconnect(runner, connection, now: now)
        } else if choice < 7 {
            tally.quits += 1
            connection.send(Array("quit:\n".utf8))
            disconnect(runner, connection, now: now)
        } else {
            runner.phase = .draining(deadline: now + 10)
        }
    }

    private func disconnect(_ runner: SoakRunner, _ connection: SoakRunnerConnection, now: Double) {
        connection.close(reason: "session over", expected: true)
        runner.connection = nil
        runner.phase = .offline(until: now + random.uniform(in: configuration.offlineSeconds))
    }

    private func connect(_ runner: SoakRunner) {
        do {
            let connection = try load.connect { SoakRunnerConnection(socket: $0, driver: load, runner: runner, soak: self) }
            runner.connection = connection
            runner.phase = .identifying
            runner.identifyingSince = LoadClock.monotonicSeconds()
            tally.runnerSessions += 1
            connection.send(runner.identifyLine)
        } catch {
            noteConnectFailure(error)
            runner.phase = .offline(until: LoadClock.monotonicSeconds() + 1)
        }
    }

    /// `ok:iam`: resend what no ack covers, then stream.
    func runnerIdentified(_ runner: SoakRunner) {
        guard let connection = runner.connection else { return }
        let now = LoadClock.monotonicSeconds()
        runner.phase = .streaming(until: now + random.uniform(in: configuration.sessionSeconds))
        runner.nextFixAt = now
        let resend = runner.resendLines()
        if !resend.isEmpty { connection.send(resend) }
    }

    /// `end:` after `stop:`.
    func runnerStopped(_ runner: SoakRunner) {
        tally.stops += 1
        if let connection = runner.connection { disconnect(runner, connection, now: LoadClock.monotonicSeconds()) }
    }

    /// An event (a line, or an event stream's `event:`) reached a normal spectator.
    func spectatorEvent() {
        tally.spectatorEvents += 1
        lastSpectatorEvent = LoadClock.monotonicSeconds()
    }

    /// A `pace` with this `ts` (µs) reached a normal spectator at `now` (wall-clock µs).
    func spectatorPace(stamp: Int64?, at now: Int64) {
        if let stamp { spectatorPaceLatency.record(now - stamp) }
    }

    private func addSpectator(web: Bool, now: Double) {
        let port = web ? server.httpPort : server.port
        guard let port else { return }
        let leaves = now + random.uniform(in: configuration.spectatorSeconds)
        do {
            let spectator = try load.connect(port: port) {
                SoakSpectator(socket: $0, driver: load, soak: self, leavesAt: leaves, web: web)
            }
            let target = random.chance(0.1) ? "*" : runners[random.below(runners.count)].name
            spectator.start(watching: target)
            spectators.append(spectator)
            if web { tally.webSpectatorSessions += 1 } else { tally.spectatorSessions += 1 }
        } catch {
            noteConnectFailure(error)
        }
    }

    private func noteConnectFailure(_ error: LoadSetupError) {
        tally.connectFailures += 1
        if tally.firstConnectFailure == nil { tally.firstConnectFailure = error.description }
    }

    // MARK: End

    /// No new sessions; runners with unacked fixes reconnect and resend; up to 30 s for every ack.
    private func windDown() {
        winding = true
        let deadline = LoadClock.monotonicSeconds() + 30
        let ticker = load.loop.schedule(every: 0.01) { [unowned self] in
            let now = LoadClock.monotonicSeconds()
            tick(now: now)
            let waiting = runners.contains { $0.unacknowledgedCount > 0 || $0.phase == .identifying }
            if !waiting || now >= deadline { load.loop.stop() }
        }
        load.loop.run()
        load.loop.cancel(ticker)
    }

    /// The stalled readers this bench closed stay open on the server until it next writes to them (an event
    /// stream's heartbeat comes after 15 s of silence): up to 20 s for the server's files that are not
    /// connections to come back within 4 of the first report's, so that the last report counts what stayed.
    private func settle() {
        guard hostile != nil, let target = (samples.count > 2 ? samples[1] : samples[0]).otherFiles else { return }
        let started = LoadClock.monotonicSeconds()
        let ticker = load.loop.schedule(every: 0.5) { [unowned self] in
            let other = sample().otherFiles ?? .max
            if other <= target + 4 || LoadClock.monotonicSeconds() - started >= 20 { load.loop.stop() }
        }
        load.loop.run()
        load.loop.cancel(ticker)
        settleSeconds = LoadClock.monotonicSeconds() - started
    }

    private func closeEveryone() {
        for runner in runners {
            runner.connection?.close(reason: "done", expected: true)
            runner.connection = nil
        }
        for spectator in spectators { spectator.close(reason: "done", expected: true) }
        spectators.removeAll()
    }

    private func noteResident(now: Double) {
        if let bytes = server.residentBytes() { residentSamples.append((now - started, bytes)) }
    }

    private func sample() -> SoakSample {
        let connections = runners.filter { $0.connection != nil }.count + spectators.count + (hostile?.openConnections ?? 0)
        return SoakSample(seconds: LoadClock.monotonicSeconds() - started, residentBytes: server.residentBytes(),
                          openFiles: server.openFileCount(), connections: connections, tally: tally,
                          fixesAcknowledged: runners.reduce(0) { $0 + $1.acknowledged.count },
                          hostile: hostile?.counts ?? [])
    }
}

extension LoadServerProcess {
    /// The server's open files (entries of /proc/PID/fd), nil when unknown.
    func openFileCount() -> Int? {
        guard let processID else { return nil }
        return try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(processID)/fd").count
    }
}

/// The soak's draws from RunCore's seeded generator, so a soak run's churn can be repeated.
extension SeededRandom {
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    mutating func below(_ count: Int) -> Int { Int.random(in: 0..<count, using: &self) }

    mutating func uniform(in range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &self) }
}
