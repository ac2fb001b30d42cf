import Foundation
import Reactor
import Wire

/// What one load run does. Every field is a flag of `moonrunner-bench load`.
struct LoadConfiguration: Sendable {
    /// Connections that identify as runners and stream fixes.
    var runners = 0
    /// Connections that watch a runner (spectator K watches runner K mod R).
    var spectators = 0
    /// Web spectators: `GET /events?watch=NAME` on the HTTP port (web spectator K watches runner K mod R).
    var webSpectators = 0
    /// Phone apps posting OsmAnd positions over HTTP, one device per runner, instead of runners streaming `loc:`.
    var devices = 0
    /// Devices reuse their connection (keep-alive) rather than opening one per position.
    var deviceKeepAlive = true
    /// After the devices' live positions: phones with a fresh token each that send a queue of
    /// ``backlogSize`` positions, first one per request, then (other phones) the whole queue in one batch.
    var backlogDevices = 0
    /// Positions in each backlog phone's queue.
    var backlogSize = 1000
    /// Connections that ping once and then stay silent.
    var idle = 0
    /// Fixes per second per runner when not flat out.
    var rate = 1.0
    /// Runners write as fast as the server takes, `pipeline` unacknowledged fixes at most.
    var flatOut = false
    /// Seconds of streaming.
    var duration = 10.0
    /// Unacknowledged fixes per runner in flat-out mode.
    var pipeline = 256
    /// Runner names are `PREFIX-N`.
    var namePrefix = "load"
    /// Spectators connect here instead of the runners' port: another node of a cluster (nil: the same server).
    var spectatorPort: UInt16?
    /// Seconds of phone clock between a runner's fixes (`ts` then runs ahead of the wall clock, as when a
    /// recorded run is replayed fast); nil stamps each fix with the wall clock at send time.
    var fixInterval: Double?
    /// Seconds to wait after streaming for the last acks and events.
    var drainTimeout = 10.0
    /// Fixes each runner sends in all (its run then stays live, without `stop:`); streaming ends once every
    /// runner's are sent and acknowledged, or after `duration`. Nil: runners stream for the whole duration.
    var fixesPerRunner: Int?
}

/// Everything measured in one load run.
struct LoadResult {
    var setupSeconds = 0.0
    var streamingSeconds = 0.0
    var fixesSent = 0
    var fixesSentWhileStreaming = 0
    var fixesAcknowledged = 0
    var paceExpected = 0
    var paceReceived = 0
    var paceReceivedWhileStreaming = 0
    var ownPaceReceived = 0
    /// Run, split, badge and end events: what the web spectators got, and what they should have.
    var otherEventsReceived = 0
    var otherEventsExpected = 0
    var paceLatency = LatencyHistogram()
    /// Device positions answered 200 while streaming, and their answer latency.
    var devicePositionsAnswered = 0
    var deviceLatency = LatencyHistogram()
    /// The backlog phases (``LoadConfiguration/backlogDevices``): one position per request, then one batch.
    var backlogSingle: BacklogFigures?
    var backlogBatch: BacklogFigures?
    /// The same, only for fixes sent at least one second after streaming began (run starts excluded).
    var steadyPaceLatency = LatencyHistogram()
    var ackLatency = LatencyHistogram()
    var idleReady = 0
    var serverErrors = 0
    var firstServerError: String?
    var unexpectedCloses = 0
    var firstCloseReason: String?
    var protocolErrors = 0
    var malformedPaceSamples = 0
    var checkedPaceSamples = 0
    var residentBefore: Int?
    var residentAfterIdle: Int?
    var residentConnected: Int?
    var residentAfter: Int?
    /// With ``LoadConfiguration/fixesPerRunner``: 11 s after the last ack, the runs still live.
    var residentSettled: Int?
    var serverCPUSeconds: Double?
    var benchCPUSeconds: Double?
    var statistics: StatsEvent?
    /// `/proc/loadavg`'s 1-minute figure when streaming started: other work competing for the cores.
    var machineLoadAverage: String?
}

/// Phones sending their queues at once, as after a run started offline.
struct BacklogFigures {
    var devices = 0
    var queueSize = 0
    /// From the first request to the last answer.
    var seconds = 0.0
    /// Positions in the requests sent, and in those answered 200.
    var positionsSent = 0
    var positionsAnswered = 0
    /// Answers by status (`200 OK`, `400 Bad Request`, …).
    var answers: [String: Int] = [:]
    var latency = LatencyHistogram()
    /// The devices' runs' positions on disk (`<trkpt>` in each run's GPX export), nil when unknown (then why).
    var positionsStored: Int?
    var storeCheckProblem: String?
    /// A batch request's body (batch mode).
    var batchBodyBytes = 0
    /// True when every phone finished its queue before the time limit.
    var finished = false
}

/// A setup step that failed (the benchmark exits 1).
struct LoadSetupError: Error, CustomStringConvertible {
    /// What failed.
    let description: String
}

/// Drives every client connection of one load run on a single epoll loop in this thread.
///
/// The phases run in order, each as `loop.run()` until its condition holds: idle connections ping, runners
/// identify, spectators watch, runners stream for the duration, then the last acks and events drain.
final class LoadDriver {
    let configuration: LoadConfiguration
    let loop: EventLoop
    let server: LoadServerProcess
    /// Shared by every peer's reads (one thread).
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private(set) var runners: [LoadRunner] = []
    private(set) var spectators: [LoadSpectator] = []
    private var idlePeers: [LoadIdlePeer] = []
    private var result = LoadResult()
    /// True while runners stream flat out.
    private(set) var isFlatOutStreaming = false
    /// ``LoadConfiguration/fixInterval`` in microseconds.
    let fixIntervalMicros: Int64?
    private var isStreaming = false
    /// True while devices post positions.
    private(set) var isStreamingDevices = false
    private var devices: [LoadDevice] = []
    /// The backlog phases' runners and phones, and the current phase's figures.
    private var backlogPeers: [LoadPeer] = []
    private var backlog = BacklogFigures()
    /// Wall-clock µs one second into streaming: later fixes count for the steady-state latency.
    private var steadyFrom = Int64.max

    init(configuration: LoadConfiguration, server: LoadServerProcess) throws(LoadSetupError) {
        self.configuration = configuration
        self.server = server
        fixIntervalMicros = configuration.fixInterval.map { Int64(($0 * 1e6).rounded()) }
        do {
            loop = try EventLoop()
        } catch {
            throw LoadSetupError(description: "epoll: \(error)")
        }
    }

    deinit { readBuffer.deallocate() }

    // MARK: Notes from peers

    /// One `pace:` received at `now` for a fix written at `sentAt` (nil when unknown: a protocol error).
    func notePace(_ line: UnsafeBufferPointer<UInt8>, sentAt: Int64?, receivedAt now: Int64, sample: Bool) {
        result.paceReceived += 1
        if isStreaming { result.paceReceivedWhileStreaming += 1 }
        if let sentAt {
            result.paceLatency.record(now - sentAt)
            if sentAt >= steadyFrom { result.steadyPaceLatency.record(now - sentAt) }
        } else {
            noteProtocolError("pace for a fix never sent")
        }
        if sample {
            // The fast path above reads only `ts=`; a sample goes through Wire's full parser to check the rest.
            result.checkedPaceSamples += 1
            if (try? PaceEvent(event: Event.parse(line))) == nil { result.malformedPaceSamples += 1 }
        }
    }

    func noteAck(latency: Int64) { result.ackLatency.record(latency) }

    func noteServerError(_ line: String) {
        result.serverErrors += 1
        if result.firstServerError == nil { result.firstServerError = line }
    }

    /// Connections that closed without the driver asking (read by `bench soak`).
    var unexpectedCloseCount: Int { result.unexpectedCloses }

    /// Why the first of them closed.
    var firstUnexpectedCloseReason: String? { result.firstCloseReason }

    func noteUnexpectedClose(_ reason: String) {
        result.unexpectedCloses += 1
        if result.firstCloseReason == nil { result.firstCloseReason = reason }
    }

    func noteProtocolError(_ what: String) {
        result.protocolErrors += 1
        if result.firstServerError == nil { result.firstServerError = "protocol: \(what)" }
    }

    // MARK: Phases

    /// Runs the whole load and returns the measurements; throws when a connection cannot be set up.
    func run() throws(LoadSetupError) -> LoadResult {
        defer { closeEveryone() }
        let setupStarted = LoadClock.monotonicSeconds()
        result.residentBefore = server.residentBytes()
        if configuration.idle > 0 {
            for _ in 0..<configuration.idle {
                let peer = try connect { LoadIdlePeer(socket: $0, driver: self) }
                peer.start()
                idlePeers.append(peer)
            }
            try waitForAnswers(idlePeers, "ok:ping")
            _ = runLoop(timeout: 1) { false }  // let the server settle before measuring it
            result.idleReady = idlePeers.filter { $0.state == .ready }.count
            result.residentAfterIdle = server.residentBytes()
        }
        for index in 0..<configuration.runners {
            let name = "\(configuration.namePrefix)-\(index)"
            let runner = try connect { LoadRunner(socket: $0, driver: self, index: index, name: name) }
            runner.start()
            runners.append(runner)
        }
        try waitForAnswers(runners, "ok:iam")
        if !runners.isEmpty {
            for index in 0..<configuration.spectators {
                let watched = runners[index % runners.count]
                let spectator = try connect(port: configuration.spectatorPort) {
                    LoadSpectator(socket: $0, driver: self, runner: watched)
                }
                spectator.start()
                spectators.append(spectator)
            }
            try waitForAnswers(spectators, "ok:watch")
            var web: [LoadSpectator] = []
            for index in 0..<configuration.webSpectators {
                let watched = runners[index % runners.count]
                guard let httpPort = server.httpPort else {
                    throw LoadSetupError(description: "the server has no HTTP port for web spectators")
                }
                let spectator = try connect(port: httpPort) { LoadSpectator(socket: $0, driver: self, runner: watched, web: true) }
                spectator.start()
                web.append(spectator)
            }
            try waitForAnswers(web, "HTTP/1.1 200")
            spectators += web
        }
        if configuration.devices > 0 { try connectDevices() }
        result.setupSeconds = LoadClock.monotonicSeconds() - setupStarted
        result.residentConnected = server.residentBytes()
        if configuration.devices > 0 {
            streamDevices()
        } else if !runners.isEmpty {
            stream()
        }
        if configuration.backlogDevices > 0 {
            result.backlogSingle = try sendBacklogs(.single)
            result.backlogBatch = try sendBacklogs(.batch)
        }
        result.residentAfter = server.residentBytes()
        if configuration.fixesPerRunner != nil, !runners.isEmpty {
            // The runs stay live; past the server's next hand-back of freed memory (every 10 s) what is left
            // is what they cost, not what the flood's queues took on the way.
            _ = runLoop(timeout: 11) { false }
            result.residentSettled = server.residentBytes()
        }
        result.statistics = askStatistics()
        return result
    }

    /// Streams for the configured duration, then drains.
    private func stream() {
        let serverCPUStart = server.cpuSeconds()
        let benchCPUStart = LoadServerProcess.cpuSeconds(ofStatFile: "/proc/self/stat")
        result.machineLoadAverage = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
            .split(separator: " ").first.map(String.init)
        let started = LoadClock.monotonicSeconds()
        steadyFrom = LoadClock.wallMicroseconds() + 1_000_000
        isStreaming = true
        var ticker: TimerID?
        if configuration.flatOut {
            isFlatOutStreaming = true
            for runner in runners { runner.fillPipeline() }
        } else {
            ticker = schedulePacedFixes(startingAt: started)
        }
        _ = runLoop(timeout: configuration.duration) { [unowned self] in
            guard let limit = configuration.fixesPerRunner else { return false }
            return runners.allSatisfy { $0.sent == limit && $0.acknowledged == limit }
        }
        isStreaming = false
        isFlatOutStreaming = false
        if let ticker { loop.cancel(ticker) }
        result.streamingSeconds = LoadClock.monotonicSeconds() - started
        result.fixesSentWhileStreaming = runners.reduce(0) { $0 + $1.sent }
        if let start = serverCPUStart, let end = server.cpuSeconds() { result.serverCPUSeconds = end - start }
        if let start = benchCPUStart, let end = LoadServerProcess.cpuSeconds(ofStatFile: "/proc/self/stat") {
            result.benchCPUSeconds = end - start
        }
        drain()
    }

    // MARK: Devices

    /// Each runner asks `device:` for a token; then one device per runner connects to the HTTP port.
    private func connectDevices() throws(LoadSetupError) {
        guard let httpPort = server.httpPort else { throw LoadSetupError(description: "the server has no HTTP port") }
        for runner in runners { runner.askForDeviceToken() }
        let finished = runLoop(timeout: 30) { [unowned self] in runners.allSatisfy { $0.deviceToken != nil } }
        guard finished else { throw LoadSetupError(description: "not every runner got a device token") }
        for runner in runners.prefix(configuration.devices) {
            let counter = LoadDevice.DeviceCounter(latitude: 48 + Double(runner.index % 1000) * 0.002)
            devices.append(try connect(port: httpPort) { [unowned self] in
                LoadDevice(socket: $0, driver: self, token: runner.deviceToken!, keepAlive: configuration.deviceKeepAlive,
                           counter: counter)
            })
        }
    }

    /// Devices post for the duration, each one position at a time.
    private func streamDevices() {
        let serverCPUStart = server.cpuSeconds()
        result.machineLoadAverage = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
            .split(separator: " ").first.map(String.init)
        let started = LoadClock.monotonicSeconds()
        isStreamingDevices = true
        for device in devices { device.sendPosition() }
        _ = runLoop(timeout: configuration.duration) { false }
        isStreamingDevices = false
        result.streamingSeconds = LoadClock.monotonicSeconds() - started
        if let start = serverCPUStart, let end = server.cpuSeconds() { result.serverCPUSeconds = end - start }
        _ = runLoop(timeout: 5) { [unowned self] in devices.allSatisfy { $0.counter.answered == $0.counter.sent } }
        result.devicePositionsAnswered = devices.reduce(0) { $0 + $1.counter.answered }
        result.fixesSent = devices.reduce(0) { $0 + $1.counter.sent }
    }

    func noteDeviceAnswer(latency: Int64) { result.deviceLatency.record(latency) }

    // MARK: Backlogs

    /// Phones offline since their run began send their queues: ``LoadConfiguration/backlogDevices`` runners
    /// (fresh, so the queue starts their run) each get a device token, then each phone sends its queue
    /// (``LoadBacklogDevice``); afterwards each run's GPX export says how many positions are on disk.
    private func sendBacklogs(_ mode: LoadBacklogDevice.Mode) throws(LoadSetupError) -> BacklogFigures {
        guard let httpPort = server.httpPort else { throw LoadSetupError(description: "the server has no HTTP port") }
        let count = configuration.backlogDevices
        let size = configuration.backlogSize
        var owners: [LoadRunner] = []
        for index in 0..<count {
            let name = "\(configuration.namePrefix)-\(mode == .single ? "queue" : "batch")-\(index)"
            let runner = try connect { LoadRunner(socket: $0, driver: self, index: index, name: name) }
            runner.start()
            owners.append(runner)
            backlogPeers.append(runner)
        }
        try waitForAnswers(owners, "ok:iam")
        for runner in owners { runner.askForDeviceToken() }
        guard runLoop(timeout: 30, until: { owners.allSatisfy { $0.deviceToken != nil } }) else {
            throw LoadSetupError(description: "not every backlog runner got a device token")
        }
        let newest = LoadClock.wallMicroseconds() / 1_000_000
        var phones: [LoadBacklogDevice] = []
        for runner in owners {
            let phone = try connect(port: httpPort) { [unowned self] in
                LoadBacklogDevice(socket: $0, driver: self, token: runner.deviceToken!, mode: mode, size: size,
                                  newest: newest, latitude: (mode == .single ? 47 : 46) + Double(runner.index % 1000) * 0.002)
            }
            phones.append(phone)
            backlogPeers.append(phone)
        }
        backlog = BacklogFigures(devices: count, queueSize: size)
        let started = LoadClock.monotonicSeconds()
        for phone in phones { phone.start() }
        backlog.finished = runLoop(timeout: 60 + Double(count * size) / 200) { phones.allSatisfy(\.isFinished) }
        backlog.seconds = LoadClock.monotonicSeconds() - started
        backlog.positionsSent = phones.reduce(0) { $0 + $1.positionsSent }
        backlog.positionsAnswered = phones.reduce(0) { $0 + $1.positionsAnswered }
        backlog.batchBodyBytes = phones.first?.batchBodyBytes ?? 0
        do throws(LoadSetupError) {
            var stored = 0
            for runner in owners { stored += try storedPositions(of: runner.name, port: httpPort) }
            backlog.positionsStored = stored
        } catch {
            backlog.storeCheckProblem = error.description
        }
        return backlog
    }

    func noteBacklogAnswer(latency: Int64, status: String) {
        backlog.latency.record(latency)
        backlog.answers[status, default: 0] += 1
    }

    /// The positions on disk of a runner's newest run: `GET /api/runners/NAME` for its id, then the `<trkpt>`s
    /// of `GET /runs/ID.gpx` (every accepted position the store has).
    private func storedPositions(of name: String, port: UInt16) throws(LoadSetupError) -> Int {
        let runner = try HTTPFetch.get("/api/runners/\(name)", host: server.host, port: port)
        let text = String(decoding: runner.body, as: UTF8.self)
        guard runner.status == 200, let range = text.range(of: #""last_run":"#) else {
            throw LoadSetupError(description: "GET /api/runners/\(name): \(runner.status), no last_run")
        }
        // `null`: the queue started no run, so nothing of it is stored.
        guard let runID = Int64(text[range.upperBound...].prefix { $0.isNumber }) else { return 0 }
        let export = try HTTPFetch.get("/runs/\(runID).gpx", host: server.host, port: port)
        guard export.status == 200 else {
            throw LoadSetupError(description: "GET /runs/\(runID).gpx: \(export.status)")
        }
        return String(decoding: export.body, as: UTF8.self).components(separatedBy: "<trkpt ").count - 1
    }

    /// A device that opens a connection per position closed its last one: the next position on a new one.
    func deviceClosed(_ device: LoadDevice) {
        guard isStreamingDevices, let httpPort = server.httpPort,
              let index = devices.firstIndex(where: { $0 === device }) else { return }
        guard let next = try? connect(port: httpPort, { [unowned self] in
            LoadDevice(socket: $0, driver: self, token: device.token, keepAlive: false, counter: device.counter)
        }) else { return }
        devices[index] = next
        next.sendPosition()
    }

    /// One 1 ms timer sends every due fix: runner I's K-th fix is due at start + (K + I/R) / rate, so the
    /// fixes of all runners are spread evenly over each period instead of arriving in one burst.
    private func schedulePacedFixes(startingAt started: Double) -> TimerID {
        let period = 1 / max(configuration.rate, 1e-3)
        let count = runners.count
        var nextDue = (0..<count).map { started + period * Double($0) / Double(count) }
        var cursor = 0
        return loop.schedule(every: 0.001) { [unowned self] in
            let now = LoadClock.monotonicSeconds()
            var budget = count * 4  // catch up after a stall, but never spin forever
            while budget > 0 && nextDue[cursor] <= now {
                runners[cursor].sendOneFix()
                nextDue[cursor] += period
                cursor = cursor + 1 == count ? 0 : cursor + 1
                budget -= 1
            }
        }
    }

    /// Waits for every fix to be acknowledged and every expected `pace:` to arrive, or for progress to stop.
    private func drain() {
        result.paceExpected = spectators.reduce(0) { $0 + $1.runner.sent }
        var lastProgress = LoadClock.monotonicSeconds()
        var lastTotal = -1
        _ = runLoop(timeout: configuration.drainTimeout) { [unowned self] in
            let acknowledged = runners.reduce(0) { $0 + $1.acknowledged }
            let sent = runners.reduce(0) { $0 + $1.sent }
            if acknowledged == sent && result.paceReceived >= result.paceExpected { return true }
            let total = acknowledged + result.paceReceived
            let now = LoadClock.monotonicSeconds()
            if total != lastTotal {
                lastTotal = total
                lastProgress = now
            }
            return now - lastProgress > 3
        }
        result.fixesSent = runners.reduce(0) { $0 + $1.sent }
        result.fixesAcknowledged = runners.reduce(0) { $0 + $1.acknowledged }
        result.ownPaceReceived = runners.reduce(0) { $0 + $1.ownPaceReceived }
        result.otherEventsReceived = spectators.reduce(0) { $0 + $1.otherEventsReceived }
        result.otherEventsExpected = spectators.filter(\.isWeb).reduce(0) { $0 + $1.runner.ownOtherEvents }
    }

    /// The server's counters, asked on a fresh connection (nil if it does not answer within 10 s).
    private func askStatistics() -> StatsEvent? {
        guard let control = try? connect({ LoadControlPeer(socket: $0, driver: self) }) else { return nil }
        control.start()
        _ = runLoop(timeout: 10) { control.state != .connecting }
        let statistics = control.statistics
        control.close(reason: "done", expected: true)
        return statistics
    }

    // MARK: Plumbing

    /// Connects (blocking connect: loopback handshakes are fast), makes the socket non-blocking and registers it;
    /// `receiveBuffer` is its kernel receive buffer (set before connecting), nil for the kernel's own.
    func connect<Peer: LoadPeer>(port: UInt16? = nil, receiveBuffer: Int? = nil,
                                 _ make: (StreamSocket) -> Peer) throws(LoadSetupError) -> Peer {
        do {
            let socket = try StreamSocket.connect(host: server.host, port: port ?? server.port,
                                                  receiveBufferSize: receiveBuffer)
            try socket.setBlocking(false)
            let peer = make(socket)
            try loop.register(socket.fileDescriptor, interest: peer.interest, handler: peer)
            return peer
        } catch {
            throw LoadSetupError(description: "connect to \(server.host):\(server.port): \(error)")
        }
    }

    /// Runs the loop until every peer answered its opening command; fails if one did not within the timeout.
    private func waitForAnswers(_ peers: [LoadPeer], _ answer: String) throws(LoadSetupError) {
        let timeout = 30 + Double(peers.count) / 500
        let finished = runLoop(timeout: timeout) { peers.allSatisfy { $0.state != .connecting } }
        let ready = peers.filter { $0.state == .ready }.count
        guard finished, ready == peers.count else {
            var reason = "\(ready) of \(peers.count) connections got \(answer)"
            if let error = result.firstServerError { reason += "; first error: \(error)" }
            if let close = result.firstCloseReason { reason += "; first close: \(close)" }
            throw LoadSetupError(description: reason)
        }
    }

    /// Runs the loop on this thread until `done()` (checked every 2 ms) or the timeout; true if `done()` held.
    private func runLoop(timeout: Double, until done: @escaping () -> Bool) -> Bool {
        if done() { return true }
        let deadline = LoadClock.monotonicSeconds() + timeout
        var finished = false
        let timer = loop.schedule(every: 0.002) { [unowned self] in
            if done() {
                finished = true
                loop.stop()
            } else if LoadClock.monotonicSeconds() >= deadline {
                loop.stop()
            }
        }
        loop.run()
        loop.cancel(timer)
        return finished
    }

    private func closeEveryone() {
        for peer in runners as [LoadPeer] + spectators + idlePeers + devices + backlogPeers {
            peer.close(reason: "done", expected: true)
        }
    }
}
