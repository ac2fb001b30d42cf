import LiveCore
import HTTP
import Wire

/// Wrong keys and tokens: counted per connection, source address and target (``WrongTokenLimiter``, shared
/// with the hub, which decides for the line protocol), and answered at once, later or not at all, but only
/// ever after the key or token was checked, so a right one is accepted whatever a guesser behind the same
/// address (a venue's Wi-Fi, a carrier's NAT) has done.
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

    /// Answers an HTTP request that brought a wrong key or token tried for `target` (nil: a token naming
    /// nobody): `response` now or after the limiter's delay, or 429 when the source address is refused.
    func answerWrongGuess(_ response: HTTPResponse, to connection: HTTPConnection, keepAlive: Bool, target: String?,
                          now: Double) {
        switch wrongTokens.wrong(from: Self.address(of: connection), target: target, now: now) {
        case .answer:
            write(response, to: connection, keepAlive: keepAlive)
        case .slow(let seconds):
            connection.isAwaitingResponse = true
            let id = connection.id
            _ = loop.schedule(after: seconds) { [unowned self] in resume(id, with: response, keepAlive: keepAlive) }
        case .refuse:
            write(Self.tooManyGuesses, to: connection, keepAlive: false)
        }
    }

    /// 429 for an address that gave five times the limit of wrong keys and tokens this minute.
    static let tooManyGuesses = HTTPResponse.text(.tooManyRequests, "too many wrong keys or tokens: wait a minute\n")
}
