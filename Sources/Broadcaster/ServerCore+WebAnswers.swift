import LiveCore
import HTTP
import RunCore
import RunStore
import WebRoutes
import Wire

/// The hub's answers to HTTP requests, carried out: written at once while the hub decides the request (the
/// request loop then goes on by itself), or later (after a store read, a commit, a guesser's delay), when the
/// connection's next requests go on too, after the effects being carried out (never from inside them).
extension ServerCore {
    /// ``HubEffect/respond(_:_:close:)``.
    func respond(_ id: ConnectionID, _ response: HTTPResponse, close: Bool) {
        guard let connection = connections[id] as? HTTPConnection, let answering = connection.answering else { return }
        guard answering.isDeciding else { return resumeAfterEffects.append((id, response, close)) }
        connection.answering = nil
        connection.isAwaitingResponse = false
        write(response, to: connection, keepAlive: answering.request.keepAlive && !close,
              head: answering.request.method == "HEAD")
    }

    /// ``HubEffect/respondFromStore(_:make:)``: made off the loop (503 when the loop's reads are full).
    func respondFromStore(_ id: ConnectionID, _ make: @escaping @Sendable (any RunStore) throws(StoreError) -> HTTPResponse) {
        guard !readsAreFull else { return respond(id, Self.readsFullResponse, close: false) }
        readOffLoop({ store -> HTTPResponse in
            do throws(StoreError) {
                return try make(store)
            } catch {
                return HTTPResponse.text(.internalServerError, "storage: \(error.message)\n")
            }
        }) { [unowned self] (response: HTTPResponse) in resume(id, with: response) }
    }

    /// ``HubEffect/respondOnceStored(_:_:)``: once everything submitted so far is committed (503 only if the
    /// server stops first).
    func respondOnceStored(_ id: ConnectionID, _ response: HTTPResponse) {
        afterCommit { [unowned self] failure in
            resume(id, with: failure.map { .text(.serviceUnavailable, "\($0.message)\n") } ?? response)
        }
    }

    /// ``HubEffect/respondLater(_:_:after:)``.
    func respondLater(_ id: ConnectionID, _ response: HTTPResponse, after seconds: Double) {
        _ = loop.schedule(after: seconds) { [unowned self] in resume(id, with: response) }
    }

    /// ``HubEffect/handOver(_:runner:)``: the connection goes to the loop that owns `runner`, with its request.
    func handOver(_ id: ConnectionID, runner: String) {
        guard let connection = connections[id] as? HTTPConnection, let request = connection.answering?.request,
              let owner = otherOwner(of: runner) else { return }
        connection.answering = nil
        connection.isAwaitingResponse = false
        move(connection, to: owner, .http(parser: connection.parser, idleSince: connection.idleSince, request: request))
    }

    /// A request that waits for a store read before the hub decides it again (a course the page chose): read off
    /// the loop, told to the hub, then the request decided again.
    func lookUpThenDecide(_ what: StoreLookUp, _ route: WebRoute, _ request: HTTPRequest, on id: ConnectionID) {
        // The hub holds a request back only for a course (the page's course choice).
        guard case .course(let name) = what else {
            assertionFailure("a request waits for a course, not \(what)")
            return respond(id, .text(.internalServerError, "nothing to read for this request\n"), close: false)
        }
        guard !readsAreFull else { return respond(id, Self.readsFullResponse, close: false) }
        let logger = self.logger
        readOffLoop(flushing: false, { store -> Course? in Self.readCourse(name, from: store, logger: logger) }) {
            [unowned self] course in
            guard let connection = connections[id] as? HTTPConnection else { return }
            decide { $0.learnedCourse(course, named: name) }
            connection.answering = nil
            if decide(route, request, on: connection, now: Self.now()) == nil, !connection.isAwaitingResponse {
                answerRequests(connection, now: Self.now())
            }
        }
    }

    /// A request's answer that waited: written, then the connection's next requests.
    func resume(_ id: ConnectionID, with response: HTTPResponse, close: Bool = false) {
        guard let connection = connections[id] as? HTTPConnection, let request = connection.answering?.request else { return }
        connection.answering = nil
        connection.isAwaitingResponse = false
        write(response, to: connection, keepAlive: request.keepAlive && !close, head: request.method == "HEAD")
        if connection.hasPeerClosed { closeAfterOutput(connection, reason: "closed by peer") }
        answerRequests(connection, now: Self.now())
    }

    /// 503 for a request that would read the store while this loop's reads are full.
    static let readsFullResponse = HTTPResponse.text(.serviceUnavailable, "too many reads waiting: try again shortly\n")

    /// The peer's address without its port, for per-address limits.
    static func address(of connection: Peer) -> String {
        let description = connection.socket.peerDescription
        guard let colon = description.lastIndex(of: ":") else { return description }
        return String(description[..<colon])
    }
}
