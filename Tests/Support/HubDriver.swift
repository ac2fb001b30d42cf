import HTTP
import LiveCore
import RunCore
import RunStore
import Wire

/// What a test of the hub alone puts where the server's connections would be: told each effect the hub
/// decided, in order, by a ``HubDriver``. Its defaults answer as a server of one loop with no limits would.
package protocol TestHubOutput: AnyObject {
    func send(_ line: [UInt8], to connection: ConnectionID, as role: LineRole)
    func close(_ connection: ConnectionID, reason: String)
    func answerFromStore(to connection: ConnectionID,
                         _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]])
    func sendOnceStored(_ lines: [[UInt8]], to connection: ConnectionID, as role: LineRole)
    func errorSent(to connection: ConnectionID)
    func log(_ message: String)
    func relay(_ news: HubNews)
    func answerLater(_ line: [UInt8], to connection: ConnectionID, after seconds: Double, thenClose: Bool)
    func loadReplay(for connection: ConnectionID,
                    _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> Result<ReplaySource, WireError>,
                    then deliver: @escaping (Result<ReplaySource, WireError>) -> Void)
    func readReplayFixes(_ read: @escaping @Sendable (any RunStore) throws(StoreError) -> ReplayPage,
                         then deliver: @escaping (Result<ReplayPage, StoreError>) -> Void)
    func scheduleReplays(at time: Double?)
    /// An HTTP answer to the request `connection` waits on (`later`: after the delay the hub asked for), the
    /// connection closed after it when `close`.
    func respond(_ connection: ConnectionID, _ response: HTTPResponse, later: Double?, close: Bool)
    /// The answer to a request that says something was stored, once it is.
    func respondOnceStored(_ connection: ConnectionID, _ response: HTTPResponse)
    /// The sends that follow are broadcast number `sequence` (an event stream's `id:`); nil once it is over.
    func broadcast(sequence: UInt64?)
}

extension TestHubOutput {
    /// Without a store thread: at once.
    package func sendOnceStored(_ lines: [[UInt8]], to connection: ConnectionID, as role: LineRole) {
        for line in lines { send(line, to: connection, as: role) }
    }
    /// One loop: nothing to tell.
    package func relay(_ news: HubNews) {}
    /// No clock: a slowed answer is sent at once (then the close).
    package func answerLater(_ line: [UInt8], to connection: ConnectionID, after seconds: Double, thenClose: Bool) {
        send(line, to: connection, as: .reply)
        if thenClose { close(connection, reason: "guessing keys or tokens") }
    }
    /// Tests without a store thread do not replay.
    package func loadReplay(for connection: ConnectionID,
                    _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> Result<ReplaySource, WireError>,
                    then deliver: @escaping (Result<ReplaySource, WireError>) -> Void) {}
    /// Tests without a store thread do not replay.
    package func readReplayFixes(_ read: @escaping @Sendable (any RunStore) throws(StoreError) -> ReplayPage,
                         then deliver: @escaping (Result<ReplayPage, StoreError>) -> Void) {}
    /// Tests without a timer do not replay.
    package func scheduleReplays(at time: Double?) {}
    /// Tests without HTTP hear no answers.
    package func respond(_ connection: ConnectionID, _ response: HTTPResponse, later: Double?, close: Bool) {}
    /// Without event streams, the numbers say nothing.
    package func broadcast(sequence: UInt64?) {}
    /// Without a store thread: at once.
    package func respondOnceStored(_ connection: ConnectionID, _ response: HTTPResponse) {
        respond(connection, response, later: nil, close: false)
    }
}

/// Drives a hub as the server's loop does: each input, then every effect it decided carried out by `output`
/// (and the hub's answers to what the output hands back, like a replay's run read). The hub's state reads
/// through (`driver.runners`, `driver.sessions`).
@dynamicMemberLookup
package final class HubDriver {
    package let hub: Hub
    package let output: any TestHubOutput
    package let store: any RunStore
    /// The time of the latest input (a command that waited for a store read is decided at it).
    package private(set) var now = 0.0

    package init(configuration: ServerConfiguration, store: any RunStore, output: any TestHubOutput) {
        hub = Hub(configuration: configuration, store: store)
        self.output = output
        self.store = store
    }

    package subscript<Value>(dynamicMember path: ReferenceWritableKeyPath<Hub, Value>) -> Value {
        get { hub[keyPath: path] }
        set { hub[keyPath: path] = newValue }
    }

    package subscript<Value>(dynamicMember path: KeyPath<Hub, Value>) -> Value { hub[keyPath: path] }

    /// Calls one of the hub's entry points, then carries out what it decided.
    @discardableResult
    package func decide<Answer>(_ input: (Hub) -> Answer) -> Answer {
        let answer = input(hub)
        carryOut()
        return answer
    }

    package func connected(_ id: ConnectionID, now: Double) { self.now = now; decide { $0.connected(id, now: now) } }
    package func disconnected(_ id: ConnectionID, now: Double) { self.now = now; decide { $0.disconnected(id, now: now) } }
    package func received(_ command: Command, from id: ConnectionID, now: Double) {
        self.now = now
        decide { $0.received(command, from: id, now: now) }
    }
    package func tick(now: Double) { self.now = now; decide { $0.tick(now: now) } }
    package func advanceReplays(now: Double) { decide { $0.advanceReplays(now: now) } }
    package func receiveRelayed(_ event: RelayedEvent, now: Double) { decide { $0.hear(.event(event), now: now) } }
    package func committed(_ receipt: CommitReceipt) { decide { $0.committed(receipt) } }
    package func learnedCourse(_ course: Course?, named name: String) { decide { $0.learnedCourse(course, named: name) } }
    package func raiseAlarm(_ alarm: String, at location: LocationCommand, for entry: RunnerEntry, now: Double) {
        decide { $0.raiseAlarm(alarm, at: location, for: entry, now: now) }
    }
    package func noteBattery(_ level: Double, at time: Double, for entry: RunnerEntry, now: Double) {
        decide { $0.noteBattery(level, at: time, for: entry, now: now) }
    }
    package func deviceReported(token: String, runner: String, app: String, battery: Double?, now: Double) {
        decide { $0.deviceReported(token: token, runner: runner, app: app, battery: battery, now: now) }
    }
    package func phonePositions(_ positions: [DevicePosition], token: String, app: String, for entry: RunnerEntry,
                                from id: ConnectionID, now: Double) {
        decide { $0.phonePositions(positions, token: token, app: app, for: entry, from: id, now: now) }
    }
    package func deviceSentEncrypted(token: String, now: Double) { decide { $0.deviceSentEncrypted(token: token, now: now) } }
    package func loadDevices() { decide { $0.loadDevices() } }

    /// Questions that change nothing, asked straight.
    package func courseProgress(of name: String) -> CourseProgressView? { hub.courseProgress(of: name) }
    package func runnerName(forDeviceToken token: String) -> String? { hub.runnerName(forDeviceToken: token) }

    /// Carries out every effect decided so far, in order.
    package func carryOut() {
        while let effect = hub.effects.next() { perform(effect) }
    }

    private func perform(_ effect: HubEffect) {
        switch effect {
        case .send(let line, let id, let role): output.send(line, to: id, as: role)
        case .broadcastBegins(let sequence, _): output.broadcast(sequence: sequence)
        case .broadcastEnds: output.broadcast(sequence: nil)
        case .close(let id, let reason): output.close(id, reason: reason)
        case .errorSent(let id): output.errorSent(to: id)
        case .answerFromStore(let id, let read): output.answerFromStore(to: id, read)
        case .sendOnceStored(let lines, let id, let role): output.sendOnceStored(lines, to: id, as: role)
        case .log(let message): output.log(message)
        case .relay(let index): output.relay(hub.effects.takeNews(index))
        case .answerLater(let line, let id, let seconds, let thenClose):
            output.answerLater(line, to: id, after: seconds, thenClose: thenClose)
        case .loadReplay(let id, let read, let deliver):
            output.loadReplay(for: id, read) { [self] result in decide { _ in deliver(result) } }
        case .readReplayFixes(let read, let deliver):
            output.readReplayFixes(read) { [self] result in decide { _ in deliver(result) } }
        case .scheduleReplays(let time): output.scheduleReplays(at: time)
        case .respond(let id, let response, let close): output.respond(id, response, later: nil, close: close)
        case .respondFromStore(let id, let make):
            // As the server does off the loop (a failed read is a 500), here at once.
            store.flush()
            do throws(StoreError) {
                output.respond(id, try make(store), later: nil, close: false)
            } catch {
                output.respond(id, .text(.internalServerError, "storage: \(error.message)\n"), later: nil, close: false)
            }
        case .respondOnceStored(let id, let response): output.respondOnceStored(id, response)
        case .respondLater(let id, let response, let seconds): output.respond(id, response, later: seconds, close: false)
        case .handOver: preconditionFailure("one loop owns every runner: nothing is handed over")
        case .lookUp(let what, let next, let id):
            // As the server does off the loop, here at once: read, tell the hub, then the command again.
            do throws(StoreError) {
                switch what {
                case .runner(let name):
                    let record = try store.runner(named: name)
                    decide { $0.learned(record, named: name) }
                case .course(let name):
                    let course = try store.course(named: name).flatMap { try? $0.course() }
                    decide { $0.learnedCourse(course, named: name) }
                }
                switch next {
                case .command(let command): received(command, from: id, now: now)
                case .request(let route, let request, let address):
                    decide { $0.request(route, request, from: id, address: address, now: now) }
                }
            } catch {
                decide { $0.fail(id, .storage, "storage: \(error.message)") }
            }
        case .answerStatistics(let id): hub.send(StatsEvent(hub.statisticsCounters(connections: [])), to: id)
        }
    }
}
