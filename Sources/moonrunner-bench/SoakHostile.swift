import RunCore
import Reactor
import Wire

/// How much of each hostile kind `moonrunner-bench soak` runs beside the normal mix (flags of the soak).
struct HostileConfiguration: Sendable {
    /// Line connections cheering (`msg:`): half as fast as the socket takes, half at 150 a second (under the
    /// error flood limit); and half as many (at least one) posting `POST /runners/NAME/cheers`.
    var floods = 4
    /// Connections that never read: 4 of 5 event streams (`GET /events?watch=*`), 1 of 5 `watch:*`.
    var stalled = 150
    /// Connections replaying saved runs (`replay:ID 100`), half of them never reading.
    var replayers = 4
    /// Connections guessing, in turn: wrong keys (`iam:NAME KEY`), wrong share tokens (`watch:NAME TOKEN`),
    /// wrong device tokens (`GET /osmand?id=TOKEN`), each at most 5 guesses a second. Wrong answers are slowed up
    /// to 5 s, one at a time per connection: 12 are needed to pass 100 a minute, where the server refuses at once.
    var guessers = 12
}

/// One kind of hostile client.
enum HostileKind: Int, CaseIterable {
    case cheerFlood, cheerPaced, cheerPost, stalledStream, stalledWatch, replay, stalledReplay, guessKey, guessToken,
         guessDevice

    var label: String {
        switch self {
        case .cheerFlood: "cheers, flat out"
        case .cheerPaced: "cheers, 150/s"
        case .cheerPost: "cheers, HTTP 50/s"
        case .stalledStream: "unread /events?watch=*"
        case .stalledWatch: "unread watch:*"
        case .replay: "replay:ID 100"
        case .stalledReplay: "replay:ID 100, unread"
        case .guessKey: "guess iam:NAME KEY"
        case .guessToken: "guess watch:NAME TOKEN"
        case .guessDevice: "guess /osmand?id="
        }
    }

    /// True for the kinds spoken over HTTP.
    var isHTTP: Bool { self == .cheerPost || self == .stalledStream || self == .guessDevice }

    /// Seconds before a slot whose connection was closed connects again.
    var reconnectDelay: Double {
        switch self {
        case .cheerFlood, .cheerPaced, .cheerPost, .guessKey, .guessToken, .guessDevice: 0.25
        case .stalledStream, .stalledWatch, .replay, .stalledReplay: 1
        }
    }
}

/// What one hostile kind did over the soak.
struct HostileCounts {
    /// Connections the kind keeps open at once.
    var slots = 0
    var connections = 0
    var failedConnects = 0
    /// Lines or requests written (a flat-out flood counts what it queued).
    var sent = 0
    /// The server's answers by kind: `ok:msg`, `err:busy`, `err:flood`, `202`, `429`, `done:replay`,
    /// `err:wrong_key slowed` (answered 0.2 s or more after asking), `err:wrong_key refused` (too many)…
    var answers: [String: Int] = [:]
    /// Connections the server closed (or reset).
    var closedByServer = 0

    var reconnects: Int { max(0, connections - slots) }

    /// All answers but those that say yes.
    var refusals: Int {
        answers.filter { !["ok:msg", "202", "done:replay", "ok:replay"].contains($0.key) }.values.reduce(0, +)
    }
}

/// The hostile mix: each kind in slots (``HostileConfiguration``), every one reconnecting after the server closes
/// it, all on the soak's loop and against its server: cheer floods, stalled readers, replays, guessing.
/// Driven by ``SoakDriver``'s ticker through ``tick(now:)``.
final class SoakHostileMix {
    let configuration: HostileConfiguration
    unowned let load: LoadDriver
    let server: LoadServerProcess
    /// The normal runners' names: what the cheers, the replays and the guesses aim at.
    let runnerNames: [String]
    private(set) var counts: [HostileCounts]
    /// Runs the normal runners ended with `saved=yes`: what the replayers replay.
    private var savedRuns: [Int64] = []
    /// The normal runners' names claimed so far: what the guesses aim at (a name nobody claimed would be the
    /// guesser's to take, with a key of its own).
    private var claimedNames: [String] = []
    var random: SeededRandom
    private var slots: [Slot] = []

    private final class Slot {
        let kind: HostileKind
        var peer: HostilePeer?
        var connectAt: Double

        init(kind: HostileKind, connectAt: Double) {
            self.kind = kind
            self.connectAt = connectAt
        }
    }

    init(configuration: HostileConfiguration, load: LoadDriver, server: LoadServerProcess, runnerNames: [String],
         seed: UInt64) {
        self.configuration = configuration
        self.load = load
        self.server = server
        self.runnerNames = runnerNames
        random = SeededRandom(seed: seed)
        counts = HostileKind.allCases.map { _ in HostileCounts() }
        func add(_ kind: HostileKind, _ count: Int) {
            counts[kind.rawValue].slots += count
            for _ in 0..<count { slots.append(Slot(kind: kind, connectAt: 0)) }
        }
        add(.cheerFlood, (configuration.floods + 1) / 2)
        add(.cheerPaced, configuration.floods / 2)
        add(.cheerPost, configuration.floods == 0 ? 0 : max(1, configuration.floods / 2))
        add(.stalledStream, configuration.stalled - configuration.stalled / 5)
        add(.stalledWatch, configuration.stalled / 5)
        add(.replay, configuration.replayers - configuration.replayers / 2)
        add(.stalledReplay, configuration.replayers / 2)
        for index in 0..<configuration.guessers {
            add([HostileKind.guessKey, .guessToken, .guessDevice][index % 3], 1)
        }
    }

    /// Connections open now.
    var openConnections: Int { slots.filter { $0.peer.map { $0.state != .closed } ?? false }.count }

    /// Every 10 ms: slots whose connection closed wait and connect again; open ones pace what they send.
    func tick(now: Double) {
        for slot in slots {
            if let peer = slot.peer {
                if peer.state != .closed {
                    peer.tick(now: now)
                    continue
                }
                slot.peer = nil
                slot.connectAt = now + slot.kind.reconnectDelay
            }
            if now >= slot.connectAt { connect(slot, now: now) }
        }
    }

    /// Closes every hostile connection (the churn is over).
    func stop() {
        for slot in slots {
            slot.peer?.close(reason: "done", expected: true)
            slot.peer = nil
        }
    }

    /// A normal runner's `end:` with `saved=yes`.
    func noteSavedRun(_ id: Int64) { savedRuns.append(id) }

    /// A normal runner's `ok:iam … new=yes`.
    func noteClaimed(_ name: String) { claimedNames.append(name) }

    /// A normal runner that has its key, nil before the first one claimed its name.
    func randomClaimedRunner() -> String? {
        claimedNames.isEmpty ? nil : claimedNames[random.below(claimedNames.count)]
    }

    func note(_ kind: HostileKind, answer: String) { counts[kind.rawValue].answers[answer, default: 0] += 1 }

    func noteSent(_ kind: HostileKind, _ count: Int = 1) { counts[kind.rawValue].sent += count }

    func noteClosed(_ kind: HostileKind) { counts[kind.rawValue].closedByServer += 1 }

    func randomRunner() -> String { runnerNames[random.below(runnerNames.count)] }

    /// A saved run to replay, nil before any run was saved.
    func randomSavedRun() -> Int64? { savedRuns.isEmpty ? nil : savedRuns[random.below(savedRuns.count)] }

    /// 32 random hex digits: a key or token nobody has.
    func randomToken() -> String {
        String((0..<32).map { _ in "0123456789abcdef".randomElement(using: &random)! })
    }

    private func connect(_ slot: Slot, now: Double) {
        let kind = slot.kind
        if kind == .replay || kind == .stalledReplay, savedRuns.isEmpty {
            slot.connectAt = now + 1
            return
        }
        guard let port = kind.isHTTP ? server.httpPort : server.port else { return }
        do {
            let stalled = kind == .stalledStream || kind == .stalledWatch || kind == .stalledReplay
            let peer: HostilePeer = try load.connect(port: port, receiveBuffer: stalled ? 4096 : nil) { socket in
                switch kind {
                case .cheerFlood, .cheerPaced: HostileCheerer(socket: socket, mix: self, kind: kind)
                case .cheerPost: HostileCheerPoster(socket: socket, mix: self, kind: kind)
                case .stalledStream, .stalledWatch, .stalledReplay:
                    HostileStalledReader(socket: socket, mix: self, kind: kind)
                case .replay: HostileReplayer(socket: socket, mix: self, kind: kind)
                case .guessKey, .guessToken: HostileGuesser(socket: socket, mix: self, kind: kind)
                case .guessDevice: HostileDeviceGuesser(socket: socket, mix: self, kind: kind)
                }
            }
            counts[kind.rawValue].connections += 1
            slot.peer = peer
            peer.start(now: now)
        } catch {
            counts[kind.rawValue].failedConnects += 1
            slot.connectAt = now + 1
        }
    }

    /// One line per kind: slots, connections, what was sent and answered, closes.
    func reportLines() -> [String] {
        HostileKind.allCases.compactMap { kind in
            let count = counts[kind.rawValue]
            guard count.slots > 0 else { return nil }
            let answers = count.answers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return "  \(kind.label): \(count.slots) at once, \(count.connections) connections (\(count.reconnects) "
                + "reconnects, \(count.failedConnects) failed), \(count.sent) sent, answers [\(answers)], "
                + "\(count.closedByServer) closed by the server"
        }
    }
}

/// A hostile connection: counts its answers and its closes by the server for its kind, never as a failure.
class HostilePeer: LoadPeer {
    unowned let mix: SoakHostileMix
    let kind: HostileKind

    init(socket: StreamSocket, mix: SoakHostileMix, kind: HostileKind, reading: Bool = true) {
        self.mix = mix
        self.kind = kind
        super.init(socket: socket, driver: mix.load, reading: reading)
    }

    /// Sends its opening request.
    func start(now: Double) {}

    /// Every 10 ms while open.
    func tick(now: Double) {}

    override func closedUnexpectedly(_ reason: String) { mix.noteClosed(kind) }

    /// `err:busy "…"` → `err:busy`; `ok:msg count=1` → `ok:msg`.
    static func answerKind(_ line: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: line.prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
    }
}

/// `watch:*` (or a runner), then `msg:` lines: flat out (as much as the socket takes, until `err:flood` closes
/// it) or at 150 a second.
final class HostileCheerer: HostilePeer {
    private var nextAt = 0.0
    private var number = 0

    override func start(now: Double) {
        let target = mix.random.chance(0.5) ? "*" : mix.randomRunner()
        send(Array("watch:\(target)\n".utf8))
        nextAt = now
    }

    override func tick(now: Double) {
        guard state == .ready else { return }
        var lines = 0
        if kind == .cheerFlood {
            guard !hasPendingOutput else { return }
            lines = 64
        } else {
            while nextAt <= now && lines < 16 {
                nextAt += 1.0 / 150
                lines += 1
            }
            nextAt = max(nextAt, now - 1)
        }
        guard lines > 0 else { return }
        withOutput { output in
            for _ in 0..<lines {
                number += 1
                output.append(contentsOf: "msg:Allez \(number)!\n".utf8)
            }
        }
        mix.noteSent(kind, lines)
        flush()
    }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if line.starts(with: "ok:watch".utf8) {
            state = .ready
        } else if line.starts(with: "ok:msg".utf8) || line.starts(with: "err:".utf8) {
            mix.note(kind, answer: Self.answerKind(line))
        }
    }
}

/// `POST /runners/NAME/cheers` on a keep-alive connection, one at a time, at most 50 a second.
final class HostileCheerPoster: HostilePeer {
    private var answers = HTTPAnswerReader()
    private var awaiting = false
    private var nextAt = 0.0

    override func start(now: Double) { state = .ready }

    override func tick(now: Double) {
        guard !awaiting, now >= nextAt else { return }
        let body = "Allez !"
        send(Array(("POST /runners/\(mix.randomRunner())/cheers HTTP/1.1\r\nHost: soak\r\n"
                    + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8))
        mix.noteSent(kind)
        awaiting = true
        nextAt = now + 1.0 / 50
    }

    override func receivedBytes(_ bytes: UnsafeRawBufferPointer, at now: Int64) {
        for status in answers.append(bytes) {
            mix.note(kind, answer: String(status))
            awaiting = false
        }
    }
}

/// A connection that never reads (a 4 KiB receive buffer, set before connecting): an event stream for everyone, `watch:*`, or a replay
/// asked for again every 2 s. It writes a probe now and then (a blank line to the stream, which the server
/// ignores; `ping:`), so that a connection the server closed resets and is opened again.
final class HostileStalledReader: HostilePeer {
    private var nextProbe = 0.0

    init(socket: StreamSocket, mix: SoakHostileMix, kind: HostileKind) {
        super.init(socket: socket, mix: mix, kind: kind, reading: false)
    }

    override func start(now: Double) {
        switch kind {
        case .stalledStream: send(Array("GET /events?watch=* HTTP/1.1\r\nHost: soak\r\n\r\n".utf8))
        case .stalledWatch: send(Array("watch:*\n".utf8))
        default: askReplay()
        }
        mix.noteSent(kind)
        nextProbe = now + probeInterval * mix.random.uniform(in: 0.5...1.5)
    }

    private var probeInterval: Double { kind == .stalledReplay ? 2 : 10 }

    override func tick(now: Double) {
        guard now >= nextProbe else { return }
        nextProbe = now + probeInterval
        switch kind {
        case .stalledStream: send(Array("\r\n".utf8))
        case .stalledWatch: send(Array("ping:\n".utf8))
        default: askReplay()
        }
        mix.noteSent(kind)
    }

    private func askReplay() {
        if let run = mix.randomSavedRun() { send(Array("replay:\(run) 100\n".utf8)) }
    }
}

/// `replay:ID 100` of a saved run, read to its `done:replay`, then the next.
final class HostileReplayer: HostilePeer {
    private var awaiting = false

    override func tick(now: Double) {
        guard !awaiting, let run = mix.randomSavedRun() else { return }
        send(Array("replay:\(run) 100\n".utf8))
        mix.noteSent(kind)
        awaiting = true
    }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        if line.starts(with: "done:replay".utf8) || line.starts(with: "err:".utf8) {
            mix.note(kind, answer: Self.answerKind(line))
            awaiting = false
        }
    }
}

/// Wrong keys (`iam:NAME KEY`) or wrong share tokens (`watch:NAME TOKEN`) for the normal runners' names, the
/// next one after each answer, at most 5 a second. An answer 0.2 s or more after the guess counts as slowed.
final class HostileGuesser: HostilePeer {
    private var askedAt: Double?
    private var nextAt = 0.0

    override func start(now: Double) { state = .ready }

    override func tick(now: Double) {
        guard askedAt == nil, now >= nextAt, let name = mix.randomClaimedRunner() else { return }
        let verb = kind == .guessKey ? "iam" : "watch"
        send(Array("\(verb):\(name) \(mix.randomToken())\n".utf8))
        mix.noteSent(kind)
        askedAt = now
        nextAt = now + 0.2
    }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        guard line.starts(with: "err:".utf8) || line.starts(with: "ok:".utf8), let asked = askedAt else { return }
        askedAt = nil
        var answer = Self.answerKind(line)
        if String(decoding: line, as: UTF8.self).contains("too many") {
            answer += " refused"
        } else if LoadClock.monotonicSeconds() - asked >= 0.2 {
            answer += " slowed"
        }
        mix.note(kind, answer: answer)
        // A guess taken (counted: the verdict fails) must not leave a runner's connection here.
        if line.starts(with: "ok:".utf8) { close(reason: "guess taken", expected: true) }
    }
}

/// A phone app with a wrong device token: `GET /osmand?id=TOKEN&…` on a keep-alive connection, the next after
/// each answer, at most 5 a second.
final class HostileDeviceGuesser: HostilePeer {
    private var answers = HTTPAnswerReader()
    private var askedAt: Double?
    private var nextAt = 0.0

    override func start(now: Double) { state = .ready }

    override func tick(now: Double) {
        guard askedAt == nil, now >= nextAt else { return }
        var request = Array("GET /osmand?id=\(mix.randomToken())&lat=48.1&lon=11.5&timestamp=".utf8)
        LoadClock.appendTimestamp(LoadClock.wallMicroseconds(), to: &request)
        request += Array(" HTTP/1.1\r\nHost: soak\r\n\r\n".utf8)
        send(request)
        mix.noteSent(kind)
        askedAt = now
        nextAt = now + 0.2
    }

    override func receivedBytes(_ bytes: UnsafeRawBufferPointer, at now: Int64) {
        for status in answers.append(bytes) {
            guard let asked = askedAt else { continue }
            askedAt = nil
            let slowed = status != 429 && LoadClock.monotonicSeconds() - asked >= 0.2
            mix.note(kind, answer: String(status) + (slowed ? " slowed" : ""))
        }
    }
}

/// Cuts HTTP/1.1 answers out of what a keep-alive connection reads: the status of each once its whole body
/// (`Content-Length`) is in.
struct HTTPAnswerReader {
    private var bytes: [UInt8] = []

    /// The statuses of the answers these bytes complete, in order.
    mutating func append(_ chunk: UnsafeRawBufferPointer) -> [Int] {
        bytes.append(contentsOf: chunk)
        var statuses: [Int] = []
        while let headEnd = headEnd() {
            let head = String(decoding: bytes[..<headEnd], as: UTF8.self).lowercased()
            let length = head.split(separator: "\r\n")
                .first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).drop { $0 == " " }) } ?? 0
            guard bytes.count >= headEnd + 4 + length else { break }
            statuses.append(Int(head.dropFirst("http/1.1 ".count).prefix(3)) ?? 0)
            bytes.removeFirst(headEnd + 4 + length)
        }
        return statuses
    }

    /// Where the first head's blank line starts, nil before it is in.
    private func headEnd() -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10
            && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
