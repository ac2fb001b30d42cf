import LiveCore
import HTTP
import Wire

/// Wrong keys and tokens: counted per connection, source address and target (``WrongTokenLimiter``), and
/// answered at once, later or not at all, but only ever after the key or token was checked, so a right one is
/// accepted whatever a guesser behind the same address (a venue's Wi-Fi, a carrier's NAT) has done.
extension ServerCore {
    /// The hub's answer to a wrong key or share token on the line protocol: now, after the limiter's delay (the
    /// connection's later commands wait), or a refusal; a connection that gave the limit of them is closed.
    func wrongGuess(_ id: ConnectionID, target: String, answer: [UInt8]) {
        guard let connection = connections[id] as? Connection else {
            // An event stream's token was counted as the stream opened.
            return send(answer, to: id, as: .reply)
        }
        connection.wrongGuesses += 1
        let verdict = wrongTokens.wrong(from: Self.address(of: connection), target: target, now: Self.now())
        let closes = connection.wrongGuesses >= configuration.deviceFailuresPerMinute || verdict == .refuse
        switch verdict {
        case .answer:
            send(answer, to: id, as: .reply)
            errorSent(to: id)
        case .slow(let seconds):
            connection.awaitAnswer()
            _ = loop.schedule(after: seconds) { [unowned self] in
                guard connections[id] is Connection else { return }
                send(answer, to: id, as: .reply)
                if closes { close(id, reason: "guessing keys or tokens") }
                answered(id)
            }
            return
        case .refuse:
            send(Hub.line(ErrorEvent(code: .wrongKey, reason: "too many wrong keys or tokens: wait a minute")),
                 to: id, as: .reply)
        }
        if closes { close(id, reason: "guessing keys or tokens") }
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
