import HTTP
import RunStore
import WebRoutes
import Wire

/// One thing the hub decided should happen outside it: a line to a connection, a close, a store read, a relay
/// to the other loops. The hub only records its effects (``HubEffects``); whoever drives it (the server's loop,
/// or a test) carries them out after each input, in order. So the hub holds no reference to its driver, and
/// is never re-entered from inside one of its own decisions.
package enum HubEffect {
    /// Queues one event line (with its newline) for a connection; `role` says what a slow reader may go
    /// without (a runner's position, a cheer) and which runner's order it keeps.
    case send([UInt8], to: ConnectionID, as: LineRole)
    /// The sends up to ``broadcastEnds`` are one broadcast: event number `sequence` (an event stream's `id:`),
    /// with the typed event it was made from when an event stream may hear it (its JSON is written from the
    /// event, not parsed back from the line).
    case broadcastBegins(sequence: UInt64, typed: TypedBroadcast?)
    /// The broadcast begun last is over.
    case broadcastEnds
    /// Closes a connection once what is queued for it is written.
    case close(ConnectionID, reason: String)
    /// An `err:` reply went to the connection: the driver closes a connection that floods.
    case errorSent(to: ConnectionID)
    /// Runs a history read off the loop, after every write submitted so far is on disk (so a runner sees the
    /// run it just stopped), then sends the lines it made to the connection together, in order; the
    /// connection's later commands wait for them.
    case answerFromStore(to: ConnectionID, read: @Sendable (any RunStore) throws(StoreError) -> [[UInt8]])
    /// Sends lines that say a change was stored once everything submitted so far is committed (`err:storage`
    /// instead when some of it could not be); the connection's later commands wait, as for a history answer.
    case sendOnceStored([[UInt8]], to: ConnectionID, as: LineRole)
    /// One log line for operators.
    case log(String)
    /// Tells the other loops' and nodes' hubs (a sharded server or a cluster only): an event, a runner's change,
    /// a share or device token change; the news is ``HubEffects/takeNews(_:)``'s.
    case relay(_ news: Int)
    /// Sends `line` after `seconds` (a wrong key's answer, slowed for a guesser), then closes the connection
    /// when `thenClose`; the connection's later commands wait for it.
    case answerLater([UInt8], to: ConnectionID, after: Double, thenClose: Bool)
    /// Reads a saved run for `replay:` off the loop (after everything submitted is on disk), then hands the
    /// result to `deliver` on the loop; the connection's later commands wait for it.
    indirect case loadReplay(for: ConnectionID,
                    read: @Sendable (any RunStore) throws(StoreError) -> Result<ReplaySource, WireError>,
                    deliver: (Result<ReplaySource, WireError>) -> Void)
    /// Reads a replay's next page off the loop (no flush: the run is finished and was read once already),
    /// then hands it to `deliver` on the loop. The connection's commands do not wait for it.
    case readReplayFixes(read: @Sendable (any RunStore) throws(StoreError) -> ReplayPage,
                         deliver: (Result<ReplayPage, StoreError>) -> Void)
    /// Asks for ``Hub/advanceReplays(now:)`` at `time` (server clock; nil: no replay going).
    case scheduleReplays(at: Double?)
    /// The command needs something only the store knows first (a runner the hub has not met, a course it has
    /// not built): the driver reads it off the loop, hands it to the hub (``Hub/learned(_:named:)``,
    /// ``Hub/learnedCourse(_:named:)``), then gives the hub the command again. The connection's later commands
    /// wait meanwhile; everyone else goes on.
    indirect case lookUp(StoreLookUp, then: AfterLookUp, from: ConnectionID)
    /// Answers the HTTP request the connection is waiting on: the driver writes `response` (closing the
    /// connection after it when `close`, or when the request did not keep it alive), then reads its next request.
    indirect case respond(ConnectionID, HTTPResponse, close: Bool)
    /// Makes the request's answer off the loop (it reads the store), then writes it (500 if the read fails); the
    /// connection's next requests wait meanwhile.
    case respondFromStore(ConnectionID, make: @Sendable (any RunStore) throws(StoreError) -> HTTPResponse)
    /// Writes the request's answer once everything submitted so far is committed (503 if the store stops first):
    /// an answer that says something was stored.
    indirect case respondOnceStored(ConnectionID, HTTPResponse)
    /// Writes the request's answer after `seconds` (a wrong key or token, slowed for a guesser).
    indirect case respondLater(ConnectionID, HTTPResponse, after: Double)
    /// The request is about a runner another loop of this server owns (whose hub has its phones and course): the
    /// driver moves the connection there, with the request, to be decided again.
    case handOver(ConnectionID, runner: String)
    /// `stats:`: the driver answers with the hub's counters (``Hub/statisticsCounters(connections:)``) and what
    /// only it counts (connections accepted, refused, slow; with several loops, the other loops' counters).
    case answerStatistics(to: ConnectionID)
}

/// What a command waits to learn from the store (``HubEffect/lookUp(_:then:from:)``).
package enum StoreLookUp: Equatable, Sendable {
    /// A runner's record, by name (nil when nobody has the name).
    case runner(String)
    /// A stored course, by name, to be built (nil when there is none, or it no longer builds).
    case course(String)
}

/// What the hub decides once a ``HubEffect/lookUp(_:then:from:)`` is answered: the command again, or the
/// HTTP request again (a runner's page choosing a course the hub has not read yet).
package enum AfterLookUp {
    case command(Command)
    case request(WebRoute, HTTPRequest, address: String)
}

/// A broadcast's line with the event it was made from, for the event streams' JSON. A reference, so the effect
/// that carries it stays small: every effect is as large as the largest, and a flood makes several per fix.
package final class TypedBroadcast {
    package let line: [UInt8]
    package let event: ServerEvent

    init(line: [UInt8], event: ServerEvent) {
        self.line = line
        self.event = event
    }
}

/// The hub's effects not yet carried out, in the order it decided them.
///
/// The hub's helpers are named as what they ask for (`effects.send`, `effects.close`, …), so a decision reads
/// the same as a call would; the driver takes them one by one (``next()``) after each input. Effects decided
/// while the driver carries out earlier ones (an answer that feeds the hub again) join the end of the same
/// list, so they follow what was decided before them.
package struct HubEffects {
    private var list: [HubEffect] = []
    /// The news the list's ``HubEffect/relay(_:)`` effects name by index: kept beside the list so that every
    /// effect stays small and a relayed event costs no allocation of its own.
    private var news: [HubNews?] = []
    /// How many effects of `list` were taken.
    private var taken = 0

    /// True when nothing waits.
    package var isEmpty: Bool { taken == list.count }

    /// The oldest effect waiting (for a diagnosis).
    package var first: HubEffect? { isEmpty ? nil : list[taken] }

    package init() {}

    /// The oldest effect not carried out yet, moved out of the list (carrying it out costs no copy of what it
    /// holds); nil once every one was taken, the list then emptied for the next input (its capacity kept,
    /// unless a burst made it large: 64 Ki effects).
    package mutating func next() -> HubEffect? {
        guard taken < list.count else {
            if taken > 0 {
                list.removeAll(keepingCapacity: list.capacity <= 65_536)
                news.removeAll(keepingCapacity: news.capacity <= 65_536)
                taken = 0
            }
            return nil
        }
        var effect = HubEffect.broadcastEnds
        swap(&effect, &list[taken])
        taken += 1
        return effect
    }

    /// The news a ``HubEffect/relay(_:)`` effect names, moved out of the list (once).
    package mutating func takeNews(_ index: Int) -> HubNews {
        guard let taken = news[index].take() else { preconditionFailure("news \(index) was taken already") }
        return taken
    }

    mutating func send(_ line: [UInt8], to connection: ConnectionID, as role: LineRole) {
        list.append(.send(line, to: connection, as: role))
    }
    mutating func broadcastBegins(sequence: UInt64, typed: TypedBroadcast?) {
        list.append(.broadcastBegins(sequence: sequence, typed: typed))
    }
    mutating func broadcastEnds() { list.append(.broadcastEnds) }
    mutating func close(_ connection: ConnectionID, reason: String) {
        list.append(.close(connection, reason: reason))
    }
    mutating func errorSent(to connection: ConnectionID) { list.append(.errorSent(to: connection)) }
    mutating func answerFromStore(to connection: ConnectionID,
                                  _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]]) {
        list.append(.answerFromStore(to: connection, read: read))
    }
    mutating func sendOnceStored(_ lines: [[UInt8]], to connection: ConnectionID, as role: LineRole) {
        list.append(.sendOnceStored(lines, to: connection, as: role))
    }
    mutating func log(_ message: String) { list.append(.log(message)) }
    mutating func relay(_ news: HubNews) {
        self.news.append(news)
        list.append(.relay(self.news.count - 1))
    }
    mutating func answerLater(_ line: [UInt8], to connection: ConnectionID, after seconds: Double, thenClose: Bool) {
        list.append(.answerLater(line, to: connection, after: seconds, thenClose: thenClose))
    }
    mutating func loadReplay(for connection: ConnectionID,
                             _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> Result<ReplaySource, WireError>,
                             then deliver: @escaping (Result<ReplaySource, WireError>) -> Void) {
        list.append(.loadReplay(for: connection, read: read, deliver: deliver))
    }
    mutating func readReplayFixes(_ read: @escaping @Sendable (any RunStore) throws(StoreError) -> ReplayPage,
                                  then deliver: @escaping (Result<ReplayPage, StoreError>) -> Void) {
        list.append(.readReplayFixes(read: read, deliver: deliver))
    }
    mutating func lookUp(_ what: StoreLookUp, then next: AfterLookUp, from connection: ConnectionID) {
        list.append(.lookUp(what, then: next, from: connection))
    }
    mutating func respond(_ connection: ConnectionID, _ response: HTTPResponse, close: Bool = false) {
        list.append(.respond(connection, response, close: close))
    }
    mutating func respondFromStore(_ connection: ConnectionID,
                                   _ make: @escaping @Sendable (any RunStore) throws(StoreError) -> HTTPResponse) {
        list.append(.respondFromStore(connection, make: make))
    }
    mutating func respondOnceStored(_ connection: ConnectionID, _ response: HTTPResponse) {
        list.append(.respondOnceStored(connection, response))
    }
    mutating func respondLater(_ connection: ConnectionID, _ response: HTTPResponse, after seconds: Double) {
        list.append(.respondLater(connection, response, after: seconds))
    }
    mutating func handOver(_ connection: ConnectionID, runner: String) {
        list.append(.handOver(connection, runner: runner))
    }
    mutating func scheduleReplays(at time: Double?) { list.append(.scheduleReplays(at: time)) }
    mutating func answerStatistics(to connection: ConnectionID) {
        list.append(.answerStatistics(to: connection))
    }
}
