import Foundation
import MoonRunnerClient
import RunCore
import Synchronization
import Wire

/// Records a client's events (through `events()`) and lets a test await the first one matching a condition,
/// with a deadline — no sleeping to synchronise.
final class EventRecorder: Sendable {
    struct Timeout: Error, CustomStringConvertible {
        let waitingFor: String
        let seen: [ClientEvent]
        var description: String { "timed out waiting for \(waitingFor); saw \(seen.suffix(8))" }
    }

    private struct Waiter {
        let id: Int
        let predicate: @Sendable (ClientEvent) -> Bool
        let continuation: CheckedContinuation<ClientEvent, any Error>
    }

    private struct State {
        var events: [ClientEvent] = []
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private final class Storage: Sendable {
        let mutex = Mutex(State())
        func withLock<T>(_ body: (inout State) -> T) -> T { mutex.withLock { body(&$0) } }
    }

    private let state = Storage()
    private let task: Task<Void, Never>

    init(_ client: MoonRunnerClient) {
        let stream = client.events()
        let state = self.state
        task = Task {
            for await event in stream {
                let ready = state.withLock { state -> [Waiter] in
                    state.events.append(event)
                    let ready = state.waiters.filter { $0.predicate(event) }
                    state.waiters.removeAll { waiter in ready.contains { $0.id == waiter.id } }
                    return ready
                }
                for waiter in ready { waiter.continuation.resume(returning: event) }
            }
        }
    }

    deinit { task.cancel() }

    /// Everything recorded so far.
    var events: [ClientEvent] { state.withLock { $0.events } }

    /// The first recorded event (past or future) matching `predicate`.
    @discardableResult
    func first(_ description: String, timeout: Double = 10,
               where predicate: @escaping @Sendable (ClientEvent) -> Bool) async throws -> ClientEvent {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        return try await withCheckedThrowingContinuation { continuation in
            let found = state.withLock { state -> ClientEvent? in
                if let event = state.events.first(where: predicate) { return event }
                state.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                return nil
            }
            if let found {
                continuation.resume(returning: found)
                return
            }
            let state = self.state
            Task {
                try? await Task.sleep(for: .seconds(timeout))
                let expired = state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume(throwing: Timeout(waitingFor: description, seen: state.withLock { $0.events }))
            }
        }
    }

    /// The first `pace:` of `runner` whose timestamp text is `timestamp`.
    func pace(of runner: String, at timestamp: String) async throws -> PaceEvent {
        let event = try await first("pace of \(runner) at \(timestamp)") {
            if case .pace(let pace) = $0 { return pace.runner == runner && pace.timestamp == timestamp }
            return false
        }
        guard case .pace(let pace) = event else { fatalError("matched a pace") }
        return pace
    }
}

/// Fixes along a straight line north, one per second at `speed` m/s, from `start` (default: a second ago).
func straightFixes(count: Int, from start: Double = (Date().timeIntervalSince1970 - 1).rounded(.down),
                   speed: Double = 3, latitude: Double = 51.5, longitude: Double = -0.12) -> [Fix] {
    let metresPerDegree = 111_229.0
    return (0..<count).map { index in
        Fix(latitude: latitude + Double(index) * speed / metresPerDegree, longitude: longitude, accuracy: 5,
            timestamp: start + Double(index))
    }
}

extension ClientEvent {
    /// The event's kind, for compact expectations.
    var kind: String {
        switch self {
        case .runStarted: "run"
        case .note: "note"
        case .alert: "alert"
        case .rank: "rank"
        case .point: "point"
        case .pace: "pace"
        case .badge: "badge"
        case .split: "split"
        case .ended: "end"
        case .cheer: "msg"
        case .ack: "ack"
        case .ok: "ok"
        case .error: "err"
        case .history: "history"
        case .other(let event): event.kind
        case .state: "state"
        }
    }

    /// The runner the event is about, if any.
    var runner: String? {
        switch self {
        case .runStarted(let e): e.runner
        case .pace(let e): e.runner
        case .badge(let e): e.runner
        case .split(let e): e.runner
        case .ended(let e): e.runner
        case .cheer(let e): e.runner
        case .ack(let e): e.runner
        default: nil
        }
    }
}
