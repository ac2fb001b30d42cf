import HTTP
import LiveCore
import RunStore
import Testing
import Wire

/// The hub's decisions without sockets: a recorder stands in for the connections.
package final class RecordingOutput: TestHubOutput {
    package var lines: [(ConnectionID, String, role: LineRole)] = []
    package var closed: [ConnectionID] = []
    /// The HTTP answers the hub gave, in order.
    package var responses: [(ConnectionID, HTTPResponse)] = []
    /// The phone answers among them: 200 taken, 503 storage failing.
    package var phoneAnswers: [(ConnectionID, PhoneAnswer)] {
        responses.map { ($0.0, $0.1.status.code == 200 ? .taken : .storageFailing) }
    }

    package init() {}

    package func respond(_ connection: ConnectionID, _ response: HTTPResponse, later: Double?, close: Bool) {
        responses.append((connection, response))
    }

    package func send(_ line: [UInt8], to connection: ConnectionID, as role: LineRole) {
        lines.append((connection, String(decoding: line.dropLast(), as: UTF8.self), role))
    }
    package func close(_ connection: ConnectionID, reason: String) { closed.append(connection) }
    package func answerFromStore(to connection: ConnectionID,
                         _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]]) {}
    package func errorSent(to connection: ConnectionID) {}
    package func log(_ message: String) {}

    /// The kinds of the lines a connection got, in order.
    package func kinds(for connection: ConnectionID) -> [String] {
        lines.filter { $0.0 == connection }.map { String($0.1.prefix { $0 != ":" }) }
    }
}

/// A hub output that answers store reads at once (after a flush), as the server does off the loop.
package final class AnsweringOutput: TestHubOutput {
    package let store: any RunStore
    package var lines: [(ConnectionID, String)] = []
    package var closed: [ConnectionID] = []

    package init(store: any RunStore) { self.store = store }

    package func send(_ line: [UInt8], to connection: ConnectionID, as role: LineRole) {
        lines.append((connection, String(decoding: line.dropLast(), as: UTF8.self)))
    }
    package func close(_ connection: ConnectionID, reason: String) { closed.append(connection) }
    package func answerFromStore(to connection: ConnectionID,
                         _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]]) {
        store.flush()
        for line in (try? read(store)) ?? [] { send(line, to: connection, as: .reply) }
    }
    package func errorSent(to connection: ConnectionID) {}
    package func log(_ message: String) {}
    /// When the hub asked to be called for its replays.
    package var replaysDue: Double?
    /// When set, replays' runs are read only when `readHeldReplays()` is called (as a store thread would, later).
    package var holdsReplayReads = false
    private var heldReads: [() -> Void] = []
    package func loadReplay(for connection: ConnectionID,
                    _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> Result<ReplaySource, WireError>,
                    then deliver: @escaping (Result<ReplaySource, WireError>) -> Void) {
        let answer = { [store] in
            store.flush()
            deliver((try? read(store)) ?? .failure(WireError(.storage, "read failed")))
        }
        if holdsReplayReads { heldReads.append(answer) } else { answer() }
    }
    package func readHeldReplays() {
        let reads = heldReads
        heldReads = []
        for read in reads { read() }
    }
    /// When set, replays' next pages are read only when `readHeldPages()` is called.
    package var holdsReplayPages = false
    private var heldPages: [() -> Void] = []
    /// Replay pages read so far.
    package var replayPagesRead = 0
    package func readReplayFixes(_ read: @escaping @Sendable (any RunStore) throws(StoreError) -> ReplayPage,
                         then deliver: @escaping (Result<ReplayPage, StoreError>) -> Void) {
        let answer = { [store] in
            self.replayPagesRead += 1
            do throws(StoreError) { deliver(.success(try read(store))) } catch { deliver(.failure(error)) }
        }
        if holdsReplayPages { heldPages.append(answer) } else { answer() }
    }
    package func readHeldPages() {
        let reads = heldPages
        heldPages = []
        for read in reads { read() }
    }
    package func scheduleReplays(at time: Double?) { replaysDue = time }
    package func of(_ id: ConnectionID) -> [String] { lines.filter { $0.0 == id }.map(\.1) }
}
