import LiveCore
import Reactor

/// Why a newcomer is turned away as it is accepted: it hears `err:busy REASON` (line protocol) or 503.
enum Refusal {
    /// The listener's connection limit is reached (or the process has no descriptor left).
    case full
    /// Its address has ``ServerConfiguration/maximumConnectionsPerAddress`` connections open.
    case tooManyFromAddress

    /// What the newcomer is told.
    var reason: String {
        switch self {
        case .full: "server full: try again later"
        case .tooManyFromAddress: "too many connections from your address: try again later"
        }
    }
}

/// Turning newcomers away, and accepting when the process has run out of descriptors.
extension ServerCore {
    /// Tells a newcomer why (`refuse`, a write that does not block) and closes it. What it sent already is read
    /// and dropped first: a socket closed with unread input is reset, and a client reading after the reset may
    /// lose the refusal (an HTTP client has sent its request by the time it is accepted).
    func turnAway(_ socket: StreamSocket, _ refusal: Refusal, refuse: (StreamSocket, Refusal) -> Void) {
        refuse(socket, refusal)
        _ = try? socket.read(into: readBuffer)
        socket.close()
    }

    /// `accept` failed with `EMFILE` or `ENFILE`: the next newcomer is accepted on the listener's spare
    /// descriptor and refused at once (said in the log at most every 10 s); true to go on accepting (the
    /// next one gets the same), false when there is nothing more to do now (none waiting, or accepting paused).
    func refuseOutOfDescriptors(_ listener: ListeningSocket, error: IOError,
                                refuse: (StreamSocket, Refusal) -> Void) -> Bool {
        let now = Self.now()
        if now - outOfDescriptorsLoggedAt >= 10 {
            outOfDescriptorsLoggedAt = now
            logger.write("out of file descriptors (\(error)): refusing newcomers until connections close")
        }
        let outcome: ListeningSocket.Refusal
        do {
            // acceptToRefuse closes it again (the spare is taken back only then); closing twice is harmless.
            outcome = try listener.acceptToRefuse { turnAway($0, .full, refuse: refuse) }
        } catch {
            pauseAccepting(listener, after: error)
            return false
        }
        switch outcome {
        case .refused: return true
        case .nothingWaiting: return false
        case .noSpare:
            pauseAccepting(listener, after: error)
            return false
        }
    }

    /// Stops accepting on `listener` for 100 ms after a failed accept that refusing cannot help (no spare
    /// descriptor, `ENOBUFS`, …): level-triggered epoll would report it readable again at once, a spin. Then
    /// the spare descriptor is taken back if it was lost, and accepting resumes.
    func pauseAccepting(_ listener: ListeningSocket, after error: IOError) {
        logger.write("accept failed: \(error); pausing accepts for 100 ms")
        do {
            try loop.setInterest([], for: listener.fileDescriptor)
        } catch {
            logger.write("could not pause accepts (\(error)): accepting goes on")
            return
        }
        loop.schedule(after: 0.1) { [unowned self] in
            guard isAccepting else { return }
            listener.restoreSpare()
            do {
                try loop.setInterest(.readable, for: listener.fileDescriptor)
            } catch {
                logger.write("could not resume accepts (\(error)): this port accepts no more")
            }
        }
    }
}
