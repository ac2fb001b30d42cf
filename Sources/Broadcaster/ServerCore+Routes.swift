import LiveCore
import HTTP
import WebRoutes
import Wire

/// The URLs of protocol.md part 2, decoded by `WebRoute` and decided by the hub (pages, the web API, cheers,
/// phone apps, the runner page's actions); the server serves event streams, metrics and health itself.
extension ServerCore {
    /// Answers one request: the hub decides it (``Hub/request(_:_:from:address:now:)``) and its answer comes as
    /// an effect (``respond(_:_:close:)``); event streams, metrics and health are the server's own.
    func respond(to request: HTTPRequest, on connection: HTTPConnection, now: Double) {
        let route: WebRoute
        do throws(WebRouteError) {
            route = try WebRoute.resolve(request)
        } catch {
            return write(error.response, to: connection, keepAlive: request.keepAlive, head: request.method == "HEAD")
        }
        // A phone's position while the cluster bus is behind: refused before the hub makes events of it (the app
        // keeps it and sends it again), as a runner's lines are left unread.
        if route.isPositionReport && isClusterBacklogged {
            var response = HTTPResponse.text(.serviceUnavailable, "the cluster bus is behind: send it again shortly\n")
            response.headers.set("Retry-After", "5")
            return write(response, to: connection, keepAlive: request.keepAlive, head: request.method == "HEAD")
        }
        guard let own = decide(route, request, on: connection, now: now) else { return }
        let head = request.method == "HEAD"
        switch own {
        case .events:
            openEventStream(request, on: connection, now: now)
        case .health:
            write(healthResponse(now: now), to: connection, keepAlive: request.keepAlive, head: head)
        case .metrics:
            guard shard != nil else {
                let counters = statisticsCounters() + loopGauges()
                return write(metricsResponse(counters: counters), to: connection, keepAlive: request.keepAlive, head: head)
            }
            // With several loops the others' counters are asked for first; later requests wait meanwhile.
            connection.isAwaitingResponse = true
            let id = connection.id
            gatherCounters(statisticsCounters() + loopGauges()) { [unowned self] counters in
                guard let connection = connections[id] as? HTTPConnection else { return }
                connection.isAwaitingResponse = false
                write(metricsResponse(counters: counters), to: connection, keepAlive: request.keepAlive, head: head)
                answerRequests(connection, now: Self.now())
            }
        }
    }

    /// The hub decides a request; the connection waits for the answer (later requests stay in its parser) unless
    /// it came at once. Nil when decided; the route otherwise, for the server to serve.
    func decide(_ route: WebRoute, _ request: HTTPRequest, on connection: HTTPConnection, now: Double) -> Hub.DriversRoute? {
        connection.isAwaitingResponse = true
        connection.answering = (request, isDeciding: true)
        let own = decide { $0.request(route, request, from: connection.id, address: Self.address(of: connection), now: now) }
        connection.answering?.isDeciding = false
        if own != nil {
            connection.isAwaitingResponse = false
            connection.answering = nil
        }
        return own
    }
}
