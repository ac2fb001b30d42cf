import Foundation
import HTTP
import LiveCore
import RunCore
import RunStore
import Synchronization
import WebRoutes
import Wire

/// A server without sockets, for tests of what the live core decides: a hub driven as the server's loop
/// drives it (each line parsed, fed, its effects carried out in order), connections that are lists of lines,
/// a store whose commits are fed back as they happen, and a clock that moves only when the test says.
///
/// Its clients read as ``TestClient`` does (`send`, `expect`, `expectNext`, `ask`, `lines(until:)`), so a test of
/// a decision reads as the conversation it is; what it does not have is the transport (framing, budgets,
/// back-pressure, sockets), which the server's own tests keep. A client waiting for a line moves the clock
/// (``PureClient/nextLine(timeout:)``): time is the only thing that can bring a line nobody sent for.
package final class PureServer {
    package let driver: HubDriver
    package let store: any RunStore
    /// The server's clock (unix seconds): every input is decided at it; ``advance(by:)`` moves it.
    package private(set) var now: Double
    private let sink: Sink
    private var nextConnection = 1
    private let receipts: Receipts

    /// Commit receipts from the store's writer thread, handed to the hub by ``settle()``.
    private final class Receipts: Sendable {
        let waiting = Mutex<[CommitReceipt]>([])
    }

    /// A server at `now` (default: the wall clock, as the fixes of ``straightRun(count:from:speed:latitude:longitude:)``
    /// are), having recovered what `store` holds, as the server does before it accepts anyone (a cluster's node
    /// does not: `recovers` false).
    package init(configuration: ServerConfiguration = ServerConfiguration(), store: any RunStore = MemoryRunStore(),
                 now: Double = Date().timeIntervalSince1970, recovers: Bool = true) {
        self.store = store
        self.now = now
        let receipts = Receipts()
        self.receipts = receipts
        store.setCommitHandler { receipt in receipts.waiting.withLock { $0.append(receipt) } }
        sink = Sink()
        driver = HubDriver(configuration: configuration, store: store, output: sink)
        sink.server = self
        driver.hub.numberEvents(after: 0)
        if recovers { driver.decide { $0.recoverLiveRuns(now: now) } }
        driver.decide { $0.loadDevices() }
        driver.decide { $0.loadShares(now: now) }
        settle()
    }

    /// A new connection (a runner, a spectator, a coach: what it sends says which).
    package func connect(address: String = "127.0.0.1") -> PureClient {
        let client = PureClient(id: takeConnectionID(), server: self)
        sink.clients[client.id] = client
        driver.decide { $0.connected(client.id, address: address, now: now) }
        settle()
        return client
    }

    /// A browser's or a phone app's HTTP connection (its requests are answered in order, as over keep-alive).
    package func web(address: String = "127.0.0.1") -> PureWebClient {
        let client = PureWebClient(id: takeConnectionID(), address: address, server: self)
        sink.webClients[client.id] = client
        return client
    }

    private func takeConnectionID() -> ConnectionID {
        defer { nextConnection += 1 }
        return ConnectionID(nextConnection)
    }

    /// Every write submitted so far committed, and the hub told (acks, answers waiting for the disk).
    package func settle() {
        store.flush()
        while true {
            let taken = receipts.waiting.withLock { waiting in
                defer { waiting = [] }
                return waiting
            }
            guard !taken.isEmpty else { return }
            for receipt in taken { driver.committed(receipt) }
        }
    }

    /// Waits for `ready`: while it is false, the clock moves on in steps of a tenth of a second, for at most
    /// `timeout` seconds of it; whether it became true.
    package func wait(_ timeout: Double, until ready: () -> Bool) -> Bool {
        var waited = 0.0
        while !ready() {
            guard waited < timeout else { return false }
            advance(by: 0.1)
            waited += 0.1
        }
        return true
    }

    /// The clock moves on by `seconds`: the server's one-second ticks, slowed answers and replays that fall due
    /// on the way, in time order.
    package func advance(by seconds: Double) {
        let end = now + seconds
        while true {
            let tick = (now + 1).rounded(.down)
            let due = [tick, sink.replaysDue, sink.later.map(\.due).min()].compactMap { $0 }.filter { $0 <= end }.min()
            guard let due else { break }
            now = max(now, due)
            if due == tick { driver.tick(now: now) }
            if let replays = sink.replaysDue, replays <= now {
                sink.replaysDue = nil
                driver.advanceReplays(now: now)
            }
            let ready = sink.later.filter { $0.due <= now }
            sink.later.removeAll { $0.due <= now }
            for answer in ready { answer.deliver() }
            settle()
        }
        now = end
    }

    /// Feeds one line from `client` as the server's loop does: blank lines ignored, a bad one answered `err:`.
    fileprivate func receive<Bytes: Collection<UInt8>>(_ bytes: Bytes, from client: PureClient) {
        guard !bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else { return }
        do {
            driver.received(try Command.parse(bytes), from: client.id, now: now)
        } catch {
            driver.decide { $0.fail(client.id, error.code, error.reason) }
        }
        settle()
    }

    /// Decides one HTTP request from `client` as the server's loop does: decoded (a bad one answered with its
    /// status), then the hub's; the routes the server serves itself (event streams, metrics, health) are not here.
    fileprivate func receive(_ request: HTTPRequest, from client: PureWebClient) throws {
        let route: WebRoute
        do throws(WebRouteError) {
            route = try WebRoute.resolve(request)
        } catch {
            return client.answer(error.response, close: false)
        }
        let own = driver.decide { $0.request(route, request, from: client.id, address: client.address, now: now) }
        settle()
        if let own { throw PureWebClient.NotHere(route: own) }
    }

    /// A request for an event stream from `client`, as the server's loop takes it: refused (400), or the hub
    /// opens the stream and says how it starts; the events that come while it opens wait, as the server holds
    /// them while a snapshot is read. Nil for a stream that opened (200).
    fileprivate func openStream(_ request: HTTPRequest, for client: PureWebClient) -> HTTPResponse? {
        let targets: [(WatchTarget, coach: Bool)]
        switch driver.hub.streamTargets(of: request) {
        case .follow(let followed): targets = followed
        case .refuse(let refusal): return refusal
        }
        sink.streams[client.id] = client
        client.holdEvents()
        let start = driver.decide {
            $0.openStream(client.id, following: targets, token: WebRoute.shareToken(in: request),
                          lastEventID: request.lastEventID.flatMap(UInt64.init), address: client.address, mayRead: true,
                          now: now)
        }
        settle()
        switch start {
        case .missed(let missed): client.releaseEvents(first: missed.map { ($0.line, $0.sequence) }, dropping: { _ in true })
        case .live: client.releaseEvents(first: [], dropping: { _ in false })
        case .snapshot(let snapshot):
            let track = HTTPTestClient.StreamEvent(id: nil, event: "track",
                                                   data: String(decoding: snapshot.trackEvent(from: store), as: UTF8.self))
            client.releaseEvents(first: [], track: track, dropping: { $0 == nil })
        }
        return nil
    }

    fileprivate func refuseTooLong(from client: PureClient) {
        let limit = driver.hub.configuration.maximumLineLength
        driver.decide { $0.fail(client.id, .lineTooLong, "line longer than \(limit) bytes: discarded") }
        settle()
    }

    fileprivate func streamClosed(_ client: PureWebClient) {
        guard sink.streams.removeValue(forKey: client.id) != nil else { return }
        driver.disconnected(client.id, now: now)
        settle()
    }

    fileprivate func disconnect(_ client: PureClient) {
        driver.disconnected(client.id, now: now)
        settle()
    }

    /// Where the hub's effects land: the clients' lines, and what the clock will bring.
    private final class Sink: TestHubOutput {
        unowned var server: PureServer!
        var clients: [ConnectionID: PureClient] = [:]
        var webClients: [ConnectionID: PureWebClient] = [:]
        var replaysDue: Double?
        /// What falls due when the clock reaches it: slowed answers.
        var later: [(due: Double, deliver: () -> Void)] = []

        /// Event streams, by connection.
        var streams: [ConnectionID: PureWebClient] = [:]
        /// The number of the broadcast being sent, if any.
        var broadcast: UInt64?

        func broadcast(sequence: UInt64?) { broadcast = sequence }

        func send(_ line: [UInt8], to connection: ConnectionID, as role: LineRole) {
            if let stream = streams[connection] { return stream.hear(line, sequence: broadcast) }
            clients[connection]?.hear(String(decoding: line.dropLast(), as: UTF8.self))
        }
        func close(_ connection: ConnectionID, reason: String) {
            if let stream = streams.removeValue(forKey: connection) {
                stream.close()
            } else {
                guard let client = clients.removeValue(forKey: connection) else { return }
                client.isClosed = true
            }
            server.driver.disconnected(connection, now: server.now)
        }
        func answerFromStore(to connection: ConnectionID,
                             _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]]) {
            server.settle()
            let lines: [[UInt8]]
            do throws(StoreError) {
                lines = try read(server.store)
            } catch {
                lines = [Hub.line(ErrorEvent(code: .storage, reason: "storage: \(error.message)"))]
            }
            for line in lines { send(line, to: connection, as: .reply) }
            server.driver.decide { $0.counted(events: lines.count) }
        }
        func sendOnceStored(_ lines: [[UInt8]], to connection: ConnectionID, as role: LineRole) {
            server.settle()
            for line in lines { send(line, to: connection, as: role) }
            server.driver.decide { $0.counted(events: lines.count) }
        }
        func errorSent(to connection: ConnectionID) {}
        func log(_ message: String) {}
        func answerLater(_ line: [UInt8], to connection: ConnectionID, after seconds: Double, thenClose: Bool) {
            later.append((server.now + seconds, { [self] in
                send(line, to: connection, as: .reply)
                if thenClose { close(connection, reason: "guessing keys or tokens") }
            }))
        }
        func respond(_ connection: ConnectionID, _ response: HTTPResponse, later seconds: Double?, close: Bool) {
            guard let client = webClients[connection] else { return }
            guard let seconds else { return client.answer(response, close: close) }
            later.append((server.now + seconds, { client.answer(response, close: close) }))
        }
        func respondOnceStored(_ connection: ConnectionID, _ response: HTTPResponse) {
            server.settle()
            respond(connection, response, later: nil, close: false)
        }
        func loadReplay(for connection: ConnectionID,
                        _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> Result<ReplaySource, WireError>,
                        then deliver: @escaping (Result<ReplaySource, WireError>) -> Void) {
            server.settle()
            deliver((try? read(server.store)) ?? .failure(WireError(.storage, "read failed")))
        }
        func readReplayFixes(_ read: @escaping @Sendable (any RunStore) throws(StoreError) -> ReplayPage,
                             then deliver: @escaping (Result<ReplayPage, StoreError>) -> Void) {
            do throws(StoreError) { deliver(.success(try read(server.store))) } catch { deliver(.failure(error)) }
        }
        func scheduleReplays(at time: Double?) { replaysDue = time }
    }
}

/// One connection of a ``PureServer``: what it sent was decided by the time `send` returns, and every line the
/// hub sent it is in ``received``.
package final class PureClient {
    package let id: ConnectionID
    private unowned let server: PureServer
    /// Every line received so far, in order.
    package private(set) var received: [String] = []
    /// True once the hub closed it (or the test did).
    package fileprivate(set) var isClosed = false
    private var readIndex = 0
    /// Frames what ``write(_:)`` sends into lines, as the server's connection does.
    private var framer: LineFramer

    fileprivate init(id: ConnectionID, server: PureServer) {
        framer = LineFramer(maximumLineLength: server.driver.hub.configuration.maximumLineLength)
        self.id = id
        self.server = server
    }

    fileprivate func hear(_ line: String) { received.append(line) }

    /// A line that is not there, or of another kind than the test expected.
    package struct Missing: Error, CustomStringConvertible {
        let waitingFor: String
        let seen: [String]
        package var description: String { "no \(waitingFor) came; saw \(seen.suffix(10))" }
    }

    /// Sends one line; the hub has decided it (and the store committed what it wrote) when this returns.
    package func send(_ line: String) throws {
        guard !isClosed else { throw Missing(waitingFor: "open connection to send \(line)", seen: received) }
        server.receive(Array(line.utf8), from: self)
    }

    /// Sends raw bytes as they are: each complete line in them is decided in turn (a line too long answered
    /// `err:line_too_long`, as the server does), a partial one waits for the rest.
    package func write(_ bytes: [UInt8]) throws {
        guard !isClosed else { throw Missing(waitingFor: "open connection to write to", seen: received) }
        framer.append(bytes)
        while !isClosed, let framed = framer.nextLine() {
            switch framed {
            case .line(let line): server.receive(line, from: self)
            case .tooLong: server.refuseTooLong(from: self)
            }
        }
    }

    /// Waits for `ready`: while it is false, the server's clock moves on in steps of a tenth of a second (its
    /// ticks, timers and slowed answers falling due on the way), for at most `timeout` seconds of it. A line
    /// that only time brings (an idle close, a resume window's end) comes as it would over a socket; nothing
    /// else can, so a line that is not there after the wait never came.
    private func wait(_ timeout: Double, until ready: () -> Bool) -> Bool { server.wait(timeout, until: ready) }

    /// The next line not yet returned, waiting up to `timeout` seconds of the server's clock.
    package func nextLine(timeout: Double = 5) throws -> String {
        guard wait(timeout, until: { readIndex < received.count }) else { throw Missing(waitingFor: "line", seen: received) }
        defer { readIndex += 1 }
        return received[readIndex]
    }

    /// Lines until (and including) the first that satisfies `predicate`.
    @discardableResult
    package func lines(until description: String, timeout: Double = 5, _ predicate: (String) -> Bool) throws -> [String] {
        var collected: [String] = []
        var found = false
        _ = wait(timeout) {
            while !found, readIndex < received.count {
                let line = received[readIndex]
                readIndex += 1
                collected.append(line)
                found = predicate(line)
            }
            return found
        }
        guard found else { throw Missing(waitingFor: description, seen: received) }
        return collected
    }

    /// The first line (skipping others) that starts with `prefix`.
    @discardableResult
    package func expect(_ prefix: String, timeout: Double = 5) throws -> String {
        try lines(until: prefix, timeout: timeout) { $0.hasPrefix(prefix) }.last!
    }

    /// The next line, which must start with `prefix`.
    @discardableResult
    package func expectNext(_ prefix: String, timeout: Double = 5) throws -> String {
        let line = try nextLine(timeout: timeout)
        guard line.hasPrefix(prefix) else { throw TestClient.Unexpected(expected: prefix, got: line) }
        return line
    }

    /// Sends `line` and returns the answer, which must be the next line and start with `prefix`.
    @discardableResult
    package func ask(_ line: String, expecting prefix: String, timeout: Double = 5) throws -> String {
        try send(line)
        return try expectNext(prefix, timeout: timeout)
    }

    /// The lines not read yet of a connection the hub closed; fails if it is still open.
    package func awaitClose(timeout: Double = 5) throws -> [String] {
        guard wait(timeout, until: { isClosed }) else { throw Missing(waitingFor: "close", seen: received) }
        defer { readIndex = received.count }
        return Array(received[readIndex...])
    }

    /// The connection goes away (the hub hears it at once).
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        server.disconnect(self)
    }
}

/// A pure server for the body (see ``PureServer``), configured as `withServer` configures a socket one.
package func withPureServer<T>(_ configure: (inout ServerConfiguration) -> Void = { _ in },
                               store: (any RunStore)? = nil, now: Double = Date().timeIntervalSince1970,
                               _ body: (PureServer) throws -> T) rethrows -> T {
    var configuration = ServerConfiguration()
    configure(&configuration)
    return try body(PureServer(configuration: configuration, store: store ?? MemoryRunStore(), now: now))
}

/// A runner connection of a pure server that has claimed `name`; returns the client and its key.
package func connectRunner(_ name: String, to server: PureServer) throws -> (PureClient, String) {
    let client = server.connect()
    try client.send("iam:\(name)")
    let reply = try ServerEvent(line: client.expect("ok:iam"))
    guard case .ok(let ok) = reply, let key = ok["key"] else { throw TestClient.Unexpected(expected: "key", got: reply.line) }
    return (client, key)
}

/// What a test says to a connection, over a socket (``TestClient``) or to the live core alone (``PureClient``):
/// helpers written against it serve both.
package protocol LineClient: AnyObject {
    /// Every line received so far, in order.
    var received: [String] { get }
    func send(_ line: String) throws
    func nextLine(timeout: Double) throws -> String
    func lines(until description: String, timeout: Double, _ predicate: (String) -> Bool) throws -> [String]
    func expect(_ prefix: String, timeout: Double) throws -> String
    func expectNext(_ prefix: String, timeout: Double) throws -> String
    func ask(_ line: String, expecting prefix: String, timeout: Double) throws -> String
    func awaitClose(timeout: Double) throws -> [String]
    func close()
}

extension LineClient {
    package func nextLine() throws -> String { try nextLine(timeout: 5) }
    @discardableResult
    package func lines(until description: String, _ predicate: (String) -> Bool) throws -> [String] {
        try lines(until: description, timeout: 5, predicate)
    }
    @discardableResult
    package func expect(_ prefix: String) throws -> String { try expect(prefix, timeout: 5) }
    @discardableResult
    package func expectNext(_ prefix: String) throws -> String { try expectNext(prefix, timeout: 5) }
    @discardableResult
    package func ask(_ line: String, expecting prefix: String) throws -> String { try ask(line, expecting: prefix, timeout: 5) }
    package func awaitClose() throws -> [String] { try awaitClose(timeout: 5) }
}

extension TestClient: LineClient {}
extension PureClient: LineClient {}

/// An HTTP client of a ``PureServer``: a browser's page or a phone app, its requests decided by the hub as the
/// server's loop does (``HTTPTestClient``'s calls, the same `Response`).
package final class PureWebClient {
    package let id: ConnectionID
    package let address: String
    private unowned let server: PureServer
    /// Answers not yet returned, in order.
    private var answers: [HTTPResponse] = []
    /// True once an answer closed the connection (nothing after it is read).
    package private(set) var isClosed = false

    fileprivate func answer(_ response: HTTPResponse, close: Bool) {
        guard !isClosed else { return }
        answers.append(response)
        if close { isClosed = true }
    }

    /// The connection goes away.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        if isStream { server.streamClosed(self) }
    }

    // MARK: Event streams

    /// True once the connection became an event stream.
    private var isStream = false
    /// The stream's events not yet returned.
    private var events: [HTTPTestClient.StreamEvent] = []
    /// Events (with their broadcast numbers; nil for a catch-up line) that came while the stream opened.
    private var held: [(line: [UInt8], sequence: UInt64?)]?

    fileprivate func holdEvents() {
        isStream = true
        held = []
    }

    /// Lets the stream's events flow: `first` (what it missed), `track` (the run so far), then what was held but
    /// what `dropping` says.
    fileprivate func releaseEvents(first: [([UInt8], UInt64?)], track: HTTPTestClient.StreamEvent? = nil,
                                   dropping: (UInt64?) -> Bool) {
        let waiting = (held ?? []).filter { !dropping($0.sequence) }
        held = nil
        if let track { events.append(track) }
        for (line, sequence) in first + waiting.map({ ($0.line, $0.sequence) }) { hear(line, sequence: sequence) }
    }

    /// One event line the hub sent the stream, framed as the server frames it (a kind no stream carries is not).
    fileprivate func hear(_ line: [UInt8], sequence: UInt64?) {
        if held != nil { return held!.append((line, sequence)) }
        guard let kind = EventStreamFrame.streamedKind(of: line) else { return }
        events.append(HTTPTestClient.StreamEvent(id: sequence.map(String.init), event: kind,
                                                 data: String(decoding: WebAPI.eventJSON(line), as: UTF8.self)))
    }

    /// `GET /events?query`, decided as the server's loop decides it: the stream's status (200 once it opened);
    /// its events follow with ``nextEvent(timeout:)``.
    package func openStream(_ query: String, headers: String = "", timeout: Double = 10) throws -> HTTPTestClient.Response {
        try request("GET /events?\(query) HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\(headers)\r\n",
                    timeout: timeout)
    }

    /// The stream's next event, waited for on the server's clock.
    package func nextEvent(timeout: Double = 10) throws -> HTTPTestClient.StreamEvent {
        guard server.wait(timeout, until: { !events.isEmpty || isClosed }), !events.isEmpty else {
            throw HTTPTestClient.Timeout(waitingFor: "an event")
        }
        return events.removeFirst()
    }

    /// Events until one of `kind`.
    package func events(until kind: String, timeout: Double = 10) throws -> [HTTPTestClient.StreamEvent] {
        var seen: [HTTPTestClient.StreamEvent] = []
        while true {
            let event = try nextEvent(timeout: timeout)
            seen.append(event)
            if event.event == kind { return seen }
        }
    }

    /// True once the server closed the connection (as ``HTTPTestClient/awaitClose(timeout:)``).
    package func awaitClose(timeout: Double = 10) throws -> Bool {
        guard server.wait(timeout, until: { isClosed }) else { throw HTTPTestClient.Timeout(waitingFor: "close") }
        return true
    }
    private var parser = HTTPRequestParser()

    /// A route only the server's transport serves.
    package struct NotHere: Error { let route: Hub.DriversRoute }

    fileprivate init(id: ConnectionID, address: String, server: PureServer) {
        self.id = id
        self.address = address
        self.server = server
    }

    /// `GET path`, answered.
    package func get(_ path: String, headers: String = "", timeout: Double = 10) throws -> HTTPTestClient.Response {
        try request("GET \(path) HTTP/1.1\r\nHost: test\r\n\(headers)\r\n", timeout: timeout)
    }

    /// A POST with a body, answered.
    package func post(_ path: String, body: String, type: String = "text/plain", headers: String = "",
                      timeout: Double = 10) throws -> HTTPTestClient.Response {
        try request("POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: \(type)\r\n" +
                    "Content-Length: \(body.utf8.count)\r\n\(headers)\r\n\(body)", timeout: timeout)
    }

    /// One request as it would come over the wire, and its answer (``response(timeout:)``).
    package func request(_ raw: String, timeout: Double = 10) throws -> HTTPTestClient.Response {
        try send(raw)
        return try response(timeout: timeout)
    }

    /// Sends raw request bytes: each whole request in them is decided in turn (a partial one waits for the rest).
    package func send(_ raw: String) throws {
        guard !isClosed else { throw HTTPTestClient.Timeout(waitingFor: "an open connection") }
        parser.append(Array(raw.utf8))
        while let request = try parser.nextRequest() {
            do {
                try server.receive(request, from: self)
            } catch let notHere as NotHere where notHere.route == .events {
                // The stream's head (or its refusal, which closes it).
                if let refusal = server.openStream(request, for: self) { answer(refusal, close: true) } else {
                    let head = HTTPResponseHead.eventStream  // the head the server writes
                    answers.append(HTTPResponse(status: head.status, headers: head.headers, body: []))
                }
            }
        }
    }

    /// The next answer, waited for (the clock moving, as a phone waits for a slowed answer) for at most `timeout`
    /// seconds of the server's clock.
    package func response(timeout: Double = 10) throws -> HTTPTestClient.Response {
        guard server.wait(timeout, until: { !answers.isEmpty }) else { throw HTTPTestClient.Timeout(waitingFor: "an answer") }
        let answer = answers.removeFirst()
        return HTTPTestClient.Response(status: Int(answer.status.code),
                                       headers: answer.headers.map { ($0.name, $0.value) }, body: answer.body)
    }
}
