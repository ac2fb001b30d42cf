import Reactor
import Wire

/// One soak runner across all its connections: its name and key, the fixes it sent that no ack covers yet
/// (resent after each reconnect, as protocol.md §6 asks of a client), and every fix an ack covered (what the
/// store must hold at the end).
///
/// Fixes run north at 3 m/s from a distinct origin, stamped with the wall clock (µs, strictly increasing
/// across sessions), accuracy 5: every one is acceptable, so a run starts on the first.
final class SoakRunner {
    /// Where the runner is in its churn.
    enum Phase: Equatable {
        /// Not connected; connects again at this monotonic time.
        case offline(until: Double)
        /// Connected, `iam:` sent, waiting for `ok:iam`.
        case identifying
        /// Streaming until this time, then the session ends.
        case streaming(until: Double)
        /// Waiting for the acks of everything sent (until the deadline), then `stop:`.
        case draining(deadline: Double)
        /// `stop:` sent, waiting for `end:`.
        case stopping(deadline: Double)
    }

    /// The runner name.
    let name: String
    /// The key from `ok:iam … new=yes`, sent with every later `iam:`.
    var key: String?
    var phase = Phase.offline(until: 0)
    /// The current connection, nil while offline.
    var connection: SoakRunnerConnection?
    /// Monotonic time the next fix is due.
    var nextFixAt = 0.0
    /// Monotonic time the current connection sent `iam:`.
    var identifyingSince = 0.0
    /// Fixes sent and not yet covered by an ack, oldest first: their `ts` in µs and their line.
    private(set) var unacknowledged: [(micros: Int64, line: [UInt8])] = []
    private var unacknowledgedHead = 0
    /// The `ts` (µs) of every fix an ack covered.
    private(set) var acknowledged: [Int64] = []
    /// Fixes written, counting resends.
    private(set) var linesSent = 0
    /// Fixes made (each once, however often resent).
    private(set) var fixesMade = 0
    private let originLatitude: Double
    private let originLongitude: Double
    private var firstMicros: Int64 = 0
    private var lastMicros: Int64 = 0

    init(index: Int, prefix: String) {
        name = "\(prefix)-\(index)"
        originLatitude = 47.0 + Double(index % 500) * 0.002
        originLongitude = 8.0 + Double(index / 500) * 0.02
    }

    /// Fixes sent that no ack covers.
    var unacknowledgedCount: Int { unacknowledged.count - unacknowledgedHead }

    /// True while a connection is open and identified.
    var isOnline: Bool {
        switch phase {
        case .offline, .identifying: return false
        case .streaming, .draining, .stopping: return true
        }
    }

    /// The `iam:` line for the next connection.
    var identifyLine: [UInt8] { Array("iam:\(name)\(key.map { " " + $0 } ?? "")\n".utf8) }

    /// Makes the next fix (stamped now) and remembers it until an ack covers it; returns its line.
    func nextFix() -> [UInt8] {
        let micros = max(LoadClock.wallMicroseconds(), lastMicros + 1)
        if firstMicros == 0 { firstMicros = micros }
        lastMicros = micros
        let latitude = originLatitude + Double(micros - firstMicros) / 1e6 * 3 / 111_320
        var line: [UInt8] = []
        FixLine.append(latitude: latitude, longitude: originLongitude, micros: micros, to: &line)
        unacknowledged.append((micros, line))
        linesSent += 1
        fixesMade += 1
        return line
    }

    /// Every unacknowledged fix again, in order (after `ok:iam`); the server skips those it has.
    func resendLines() -> [UInt8] {
        var bytes: [UInt8] = []
        for index in unacknowledgedHead..<unacknowledged.count { bytes += unacknowledged[index].line }
        linesSent += unacknowledgedCount
        return bytes
    }

    /// `ack:NAME ts=TS`: every fix up to TS is stored.
    func acknowledge(upTo micros: Int64) {
        while unacknowledgedHead < unacknowledged.count && unacknowledged[unacknowledgedHead].micros <= micros {
            acknowledged.append(unacknowledged[unacknowledgedHead].micros)
            unacknowledgedHead += 1
        }
        if unacknowledgedHead >= 1024 && unacknowledgedHead * 2 >= unacknowledged.count {
            unacknowledged.removeFirst(unacknowledgedHead)
            unacknowledgedHead = 0
        }
    }
}

/// Counts shared by every soak connection.
struct SoakTally {
    var runnerSessions = 0
    var resumes = 0
    var drops = 0
    var stops = 0
    var quits = 0
    var runsEnded = 0
    var spectatorSessions = 0
    var webSpectatorSessions = 0
    var spectatorEvents = 0
    var malformedSent = 0
    var malformedAnswered = 0
    var unexpectedErrors = 0
    var firstUnexpectedError: String?
    var connectFailures = 0
    var firstConnectFailure: String?
    /// A normal runner refused: told `err:wrong_key`, `err:busy`, `err:flood`… (not the answer to a malformed
    /// line), or no `ok:iam` within 30 s. Must stay 0 however hostile the rest of the load.
    var runnerRefusals = 0
    var firstRunnerRefusal: String?
    /// A normal runner's connection closed by the server.
    var runnerDisconnects = 0
    var firstRunnerDisconnect: String?
    /// The longest a runner waited for `ok:iam` (seconds), and how many waited 1 s or more.
    var slowestIdentify = 0.0
    var slowIdentifies = 0

    mutating func noteUnexpected(_ line: String) {
        unexpectedErrors += 1
        if firstUnexpectedError == nil { firstUnexpectedError = line }
    }

    mutating func noteRunnerRefused(_ what: String) {
        runnerRefusals += 1
        if firstRunnerRefusal == nil { firstRunnerRefusal = what }
    }
}

/// A runner's connection: answers `ok:iam`, `ack:`, `end:`; counts the `err:` answers to its malformed lines
/// (any other `err:` is unexpected).
final class SoakRunnerConnection: LoadPeer {
    unowned let runner: SoakRunner
    unowned let soak: SoakDriver
    /// Malformed lines sent that expect an `err:` answer not yet received.
    var pendingMalformed = 0

    init(socket: StreamSocket, driver: LoadDriver, runner: SoakRunner, soak: SoakDriver) {
        self.runner = runner
        self.soak = soak
        super.init(socket: socket, driver: driver)
    }

    /// Answers that refuse the runner whatever it sent, never the answer to a malformed line.
    static let refusals: Set<String> = ["err:wrong_key", "err:busy", "err:flood", "err:idle", "err:storage",
                                        "err:shutting_down", "err:replaced", "err:live_elsewhere"]

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if line.starts(with: "ack:".utf8) {
            guard let micros = LoadClock.timestampMicros(in: line) else {
                return soak.tally.noteUnexpected("ack without ts: " + String(decoding: line, as: UTF8.self))
            }
            runner.acknowledge(upTo: micros)
        } else if line.starts(with: "ok:iam".utf8) {
            let event = try? Event.parse(line)
            if let key = event?["key"] {
                runner.key = key
                soak.hostile?.noteClaimed(runner.name)
            }
            if event?["resumed"] != nil { soak.tally.resumes += 1 }
            let waited = LoadClock.monotonicSeconds() - runner.identifyingSince
            soak.tally.slowestIdentify = max(soak.tally.slowestIdentify, waited)
            if waited >= 1 { soak.tally.slowIdentifies += 1 }
            soak.runnerIdentified(runner)
        } else if line.starts(with: "end:".utf8) {
            soak.tally.runsEnded += 1
            if let event = try? Event.parse(line), event["saved"] == "yes", let run = event["run"].flatMap(Int64.init) {
                soak.hostile?.noteSavedRun(run)
            }
            if case .stopping = runner.phase { soak.runnerStopped(runner) }
        } else if line.starts(with: "err:".utf8) {
            let text = String(decoding: line, as: UTF8.self)
            if Self.refusals.contains(HostilePeer.answerKind(line)) {
                soak.tally.noteRunnerRefused("\(runner.name): \(text)")
            } else if pendingMalformed > 0 {
                pendingMalformed -= 1
                soak.tally.malformedAnswered += 1
            } else {
                soak.tally.noteUnexpected("\(runner.name): " + text)
            }
        }
    }

    override func closedUnexpectedly(_ reason: String) {
        soak.tally.runnerDisconnects += 1
        if soak.tally.firstRunnerDisconnect == nil { soak.tally.firstRunnerDisconnect = "\(runner.name): \(reason)" }
        super.closedUnexpectedly(reason)
    }
}

/// A spectator on the line protocol (`watch:`) or the web (`GET /events?watch=`): counts what it is sent.
final class SoakSpectator: LoadPeer {
    unowned let soak: SoakDriver
    /// When it leaves (monotonic seconds).
    let leavesAt: Double
    let isWeb: Bool

    init(socket: StreamSocket, driver: LoadDriver, soak: SoakDriver, leavesAt: Double, web: Bool) {
        self.soak = soak
        self.leavesAt = leavesAt
        isWeb = web
        super.init(socket: socket, driver: driver)
    }

    /// Sends the opening request for `target` (a name or `*`).
    func start(watching target: String) {
        let request = isWeb ? "GET /events?watch=\(target) HTTP/1.1\r\nHost: soak\r\n\r\n" : "watch:\(target)\n"
        send(Array(request.utf8))
    }

    /// The web stream's current `event:` is a `pace`.
    private var readingPace = false
    /// When the subscription was answered (wall-clock µs): the paces of the next second are the catch-up
    /// (a runner's latest, however old), not timed.
    private var subscribedAt = Int64.max

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if isWeb {
            if line.starts(with: "HTTP/1.1 200".utf8) {
                state = .ready
                subscribedAt = now
            } else if line.starts(with: "event: ".utf8) {
                readingPace = line.starts(with: "event: pace".utf8)
                soak.spectatorEvent()
            } else if readingPace && line.starts(with: "data: ".utf8) {
                readingPace = false
                if now - subscribedAt >= 1_000_000 {
                    soak.spectatorPace(stamp: LoadClock.jsonTimestampMicros(in: line), at: now)
                }
            } else if line.starts(with: "HTTP/1.1 ".utf8) {
                soak.tally.noteUnexpected("web spectator: " + String(decoding: line, as: UTF8.self))
            }
        } else if line.starts(with: "ok:watch".utf8) {
            state = .ready
            subscribedAt = now
        } else if line.starts(with: "err:".utf8) {
            soak.tally.noteUnexpected("spectator: " + String(decoding: line, as: UTF8.self))
        } else {
            soak.spectatorEvent()
            if line.starts(with: "pace:".utf8) && now - subscribedAt >= 1_000_000 {
                soak.spectatorPace(stamp: LoadClock.timestampMicros(in: line), at: now)
            }
        }
    }
}
