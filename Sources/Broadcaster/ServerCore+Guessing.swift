import LiveCore
import Wire

/// Wrong keys and tokens are the hub's decision (counted per connection, source address and target by
/// ``WrongTokenLimiter``); the server only carries out a slowed answer.
extension ServerCore {
    /// A wrong key's answer the hub slowed for a guesser: sent after `seconds` (the connection's later commands
    /// wait), then the connection closed when `thenClose`.
    func answerLater(_ line: [UInt8], to id: ConnectionID, after seconds: Double, thenClose: Bool) {
        guard let connection = connections[id] as? Connection else { return }
        connection.awaitAnswer()
        _ = loop.schedule(after: seconds) { [unowned self] in
            guard connections[id] is Connection else { return }
            send(line, to: id, as: .reply)
            if thenClose { close(id, reason: "guessing keys or tokens") }
            answered(id)
        }
    }
}
