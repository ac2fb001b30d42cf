import LiveCore
import Synchronization
import HTTP
import Reactor

/// One HTTP client: requests parsed as they arrive and answered in order (a response read off the loop holds
/// the later pipelined requests back, as the line protocol does), until it becomes an event stream, which
/// then only receives. Loop thread only.
final class HTTPConnection: Peer {
    var parser: HTTPRequestParser
    /// When the request being received started (the header timeout runs from here); nil between requests.
    var requestStartedAt: Double?
    /// When the last request was answered or the connection opened (the idle keep-alive timeout runs from here).
    var idleSince: Double
    /// True while a response is being made off the loop: later requests wait in the parser.
    var isAwaitingResponse = false
    /// The request the hub decides or will answer (one at a time: the later ones wait in the parser), which says
    /// how its answer is written; `isDeciding` while the hub takes it (an answer then is written at once, and the
    /// request loop goes on by itself).
    var answering: (request: HTTPRequest, isDeciding: Bool)?
    /// The event stream this connection became (`GET /events`), nil for ordinary requests.
    var stream: EventStream?

    init(id: ConnectionID, socket: StreamSocket, server: ServerCore, now: Double) {
        parser = HTTPRequestParser(limits: server.configuration.httpLimits)
        idleSince = now
        super.init(id: id, socket: socket, server: server)
    }

    /// An event stream keeps reading only to notice the browser leaving; a connection with a bounded amount
    /// buffered stops reading until its requests are answered.
    override var wantsToRead: Bool {
        guard state == .open, !hasPeerClosed, !isDoomed else { return false }
        if stream != nil { return true }
        let limits = server.configuration.httpLimits
        return !isAwaitingResponse && parser.bufferedByteCount <= limits.maximumHeadBytes + limits.largestBodyBytes
    }

    override func deliver(_ line: [UInt8], shared: SharedLine, as role: LineRole, sequence: UInt64?) -> Bool {
        guard stream != nil else { return false }
        return server.deliverToStream(self, line, as: role, sequence: sequence)
    }

    override func didClose() {
        server.httpConnectionCount -= 1
        server.shard?.router.httpConnections.subtract(1, ordering: .relaxed)
    }

    override var owesAnAnswer: Bool { isAwaitingResponse }

    override var bufferedInputBytes: Int { parser.bufferedByteCount }

    override var heldSince: Double? {
        guard parser.bufferedByteCount > 0, let started = requestStartedAt else { return backloggedSince }
        return min(started, backloggedSince ?? started)
    }

    override func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        if writable { server.flush(self) }
        if (readable || hangup) && state == .open { server.readHTTP(self) }
    }
}

/// What an event stream needs besides its peer: the events held while its snapshot is made, and when it was
/// last written to (for heartbeats).
struct EventStream {
    /// Events that arrived while the snapshot was being read off the loop; sent right after it. Nil once sent.
    var held: [(bytes: [UInt8], role: LineRole, isCatchUp: Bool)]? = nil
    /// When anything was last queued (a heartbeat follows after `eventStreamHeartbeat` of silence).
    var lastWrite: Double
}
