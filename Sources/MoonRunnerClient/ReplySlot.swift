import Synchronization
import Wire

/// Where one waiting call's answer goes: resumed exactly once, by the reply or by the task's cancellation,
/// whichever comes first (the other is ignored).
final class ReplySlot: Sendable {
    typealias Reply = Result<[ServerEvent], MoonRunnerClientError>

    private enum State {
        /// Nobody waits yet.
        case empty
        /// The call waits here.
        case waiting(CheckedContinuation<Reply, Never>)
        /// Answered or cancelled; `early` is an answer that came before the call waited (a cancellation can).
        case settled(early: Reply?)
    }

    private let state = Mutex(State.empty)

    /// Parks the call; false when it was settled before (cancelled first), in which case it is resumed now.
    func install(_ continuation: CheckedContinuation<Reply, Never>) -> Bool {
        let early: Reply? = state.withLock { state in
            guard case .settled(let early) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .settled(early: nil)
            return early ?? .failure(.cancelled)
        }
        guard let early else { return true }
        continuation.resume(returning: early)
        return false
    }

    /// True once answered or cancelled (a command not yet handed to the I/O thread is then not sent).
    var isSettled: Bool {
        state.withLock { if case .settled = $0 { true } else { false } }
    }

    /// Answers the call; later answers are dropped.
    func settle(_ reply: Reply) {
        let waiting: CheckedContinuation<Reply, Never>? = state.withLock { state in
            switch state {
            case .empty:
                state = .settled(early: reply)
                return nil
            case .waiting(let continuation):
                state = .settled(early: nil)
                return continuation
            case .settled:
                return nil
            }
        }
        waiting?.resume(returning: reply)
    }
}
