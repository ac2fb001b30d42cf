import LiveCore
import Synchronization
import Foundation
import HTTP
import Reactor
import RunStore
import Wire

/// HTTP on the server's loop: accepting, reading, parsing, answering in order, timeouts.
extension ServerCore {
    /// Accepts every pending HTTP connection; past a limit a newcomer gets 503 and is closed.
    func acceptHTTPConnections() {
        guard let httpListener else { return }
        acceptAll(from: httpListener,
                  refuse: { [unowned self] socket, refusal in
                      metrics.countResponse(503)
                      let text = refusal == .full ? "too many connections: try again later\n" : refusal.reason + "\n"
                      var response = Self.withEveryResponseHeaders(.text(.serviceUnavailable, text))
                      // A browser or phone app that honours it comes back once a place may have freed up.
                      response.headers.set("Retry-After", "5")
                      _ = response.encoded(keepAlive: false).withUnsafeBytes { try? socket.write($0) }
                  },
                  admit: { [unowned self] socket in admitHTTP(socket, now: Self.now()) }, http: true)
    }

    /// Creates the HTTP connection for an accepted socket, or for one moved from another loop under the id it
    /// had there (`movedAs`). Logged as a line-protocol connection is, the kind aside: its `disconnect` line
    /// then closes a `connect` line of the same id.
    func admitHTTP(_ socket: StreamSocket, now: Double, movedAs: ConnectionID? = nil) -> HTTPConnection {
        let connection = HTTPConnection(id: movedAs ?? takeConnectionID(), socket: socket, server: self, now: now)
        connections[connection.id] = connection
        httpConnectionCount += 1
        shard?.router.httpConnections.add(1, ordering: .relaxed)
        if movedAs == nil { logger.write("connect \(connection.id) \(socket.peerDescription) http") }
        return connection
    }

    /// Reads what the socket has and answers the complete requests, in order.
    func readHTTP(_ connection: HTTPConnection) {
        loop.assertLoopThread()
        readChunks(connection) { bytes in
            // An event stream only listens; whatever its browser sends is ignored.
            if connection.stream == nil { connection.parser.append(bytes) }
        }
        answerRequests(connection, now: Self.now())
    }

    /// Answers the requests the parser holds until one must wait for the store, the stream starts, or the
    /// connection closes. A malformed request is answered with its status and closes the connection.
    func answerRequests(_ connection: HTTPConnection, now: Double) {
        while connection.state == .open && connection.stream == nil && !connection.isAwaitingResponse {
            let request: HTTPRequest?
            do {
                request = try connection.parser.nextRequest()
            } catch {
                write(HTTPResponse.error(error), to: connection, keepAlive: false)
                break
            }
            guard let request else { break }
            connection.requestStartedAt = nil
            respond(to: request, on: connection, now: now)
        }
        if connection.parser.hasPartialRequest {
            if connection.requestStartedAt == nil { connection.requestStartedAt = now }
        } else {
            connection.requestStartedAt = nil
        }
        updateInterest(connection)
    }

    /// Queues a response; without keep-alive the connection closes once it is written.
    func write(_ response: HTTPResponse, to connection: HTTPConnection, keepAlive: Bool, head: Bool = false) {
        guard connection.state == .open else { return }
        let response = Self.withEveryResponseHeaders(response)
        metrics.countResponse(response.status.code)
        let keep = keepAlive && !connection.hasPeerClosed
        _ = connection.output.append(response.encoded(keepAlive: keep, date: httpDate(), includeBody: !head),
                                     as: .reply, highWaterMark: .max)
        connection.idleSince = Self.now()
        scheduleFlush(connection)
        if !keep { closeAfterOutput(connection, reason: "http: \(response.status.code), not kept alive") }
    }

    /// Makes a response off the loop (it reads the store), then writes it; later requests wait meanwhile.
    func respondFromStore(to request: HTTPRequest, on connection: HTTPConnection,
                          _ make: @escaping @Sendable (any RunStore) throws(StoreError) -> HTTPResponse) {
        guard !readsAreFull else {
            return write(.text(.serviceUnavailable, "too many reads waiting: try again shortly\n"), to: connection,
                         keepAlive: request.keepAlive, head: request.method == "HEAD")
        }
        connection.isAwaitingResponse = true
        let keepAlive = request.keepAlive, head = request.method == "HEAD"
        let id = connection.id
        readOffLoop({ store -> HTTPResponse in
            do throws(StoreError) {
                return try make(store)
            } catch {
                return HTTPResponse.text(.internalServerError, "storage: \(error.message)\n")
            }
        }) { [unowned self] (response: HTTPResponse) in
            guard let connection = connections[id] as? HTTPConnection else { return }
            connection.isAwaitingResponse = false
            write(response, to: connection, keepAlive: keepAlive, head: head)
            if connection.hasPeerClosed { closeAfterOutput(connection, reason: "closed by peer") }
            answerRequests(connection, now: Self.now())
        }
    }

    /// Once a second: requests that take too long to arrive (408), idle keep-alive connections, heartbeats.
    func tickHTTP(now: Double) {
        for case let connection as HTTPConnection in connections.values where connection.state == .open {
            if var stream = connection.stream {
                if stream.held == nil && now - stream.lastWrite >= configuration.eventStreamHeartbeat {
                    var bytes: [UInt8] = []
                    ServerSentEvent.appendComment("heartbeat", to: &bytes)
                    _ = connection.output.append(bytes, as: .reply, highWaterMark: .max)
                    stream.lastWrite = now
                    connection.stream = stream
                    scheduleFlush(connection)
                }
            } else if let started = connection.requestStartedAt, now - started >= configuration.httpHeaderTimeout {
                write(.text(.requestTimeout, "request not complete within \(Int(configuration.httpHeaderTimeout)) s\n"),
                      to: connection, keepAlive: false)
            } else if connection.requestStartedAt == nil && !connection.isAwaitingResponse
                        && connection.output.isEmpty && now - connection.idleSince >= configuration.httpIdleTimeout {
                closeNow(connection, reason: "http: idle")
            }
        }
    }

    /// The `Date` header's value, made at most once a second.
    func httpDate() -> String {
        let second = Int64(Self.now())
        if second != cachedHTTPDate.second { cachedHTTPDate = (second, HTTPDate.string(unixSeconds: second)) }
        return cachedHTTPDate.text
    }
}
