import LiveCore
import RunStore
import Wire

/// The server carries out what the hub decided: after every input it feeds the hub, it takes the hub's
/// effects and performs them in order (lines queued, connections closed at the turn's end, store reads and
/// relays handed to their threads). The hub never calls the server.
extension ServerCore {
    /// Feeds the hub one input (`input` calls one of its entry points) and carries out what it decided.
    @discardableResult
    func decide<Answer>(_ input: (Hub) -> Answer) -> Answer {
        decisions += 1
        let answer = input(hub)
        decisions -= 1
        carryOutHubEffects()
        return answer
    }

    /// Carries out the hub's effects in order, and those that carrying them out leads to. Not re-entered: an
    /// effect whose carrying out feeds the hub again leaves the new effects to the loop already running, so
    /// they follow the ones decided before them.
    func carryOutHubEffects() {
        guard !isCarryingOutHubEffects else { return }
        isCarryingOutHubEffects = true
        while let effect = hub.effects.next() { carryOut(effect) }
        isCarryingOutHubEffects = false
        // Each a fresh turn of its connection's requests (which may feed the hub again), in the order decided.
        while !resumeAfterEffects.isEmpty {
            let (id, response, close) = resumeAfterEffects.removeFirst()
            resume(id, with: response, close: close)
        }
    }

    private func carryOut(_ effect: consuming HubEffect) {
        switch effect {
        case .send(let line, let id, let role):
            send(line, to: id, as: role)
        case .broadcastBegins(let sequence, let typed):
            currentBroadcast = (sequence, typed)
        case .broadcastEnds:
            currentBroadcast = nil
        case .close(let id, let reason):
            close(id, reason: reason)
        case .errorSent(let id):
            errorSent(to: id)
        case .answerFromStore(let id, let read):
            answerFromStore(to: id, read)
        case .sendOnceStored(let lines, let id, let role):
            sendOnceStored(lines, to: id, as: role)
        case .log(let message):
            logger.write(message)
        case .relay(let index):
            queueRelay(hub.effects.takeNews(index))
        case .answerLater(let line, let id, let seconds, let thenClose):
            answerLater(line, to: id, after: seconds, thenClose: thenClose)
        case .loadReplay(let id, let read, let deliver):
            loadReplay(for: id, read) { [unowned self] result in decide { _ in deliver(result) } }
        case .readReplayFixes(let read, let deliver):
            readReplayFixes(read) { [unowned self] result in decide { _ in deliver(result) } }
        case .scheduleReplays(let time):
            scheduleReplays(at: time)
        case .respond(let id, let response, let close):
            respond(id, response, close: close)
        case .respondFromStore(let id, let make):
            respondFromStore(id, make)
        case .respondOnceStored(let id, let response):
            respondOnceStored(id, response)
        case .respondLater(let id, let response, let seconds):
            respondLater(id, response, after: seconds)
        case .handOver(let id, let runner):
            handOver(id, runner: runner)
        case .lookUp(let what, let next, let id):
            lookUp(what, then: next, from: id)
        case .answerStatistics(let id):
            answerStatistics(to: id, local: statisticsCounters())
        }
    }

    /// This loop's counters for `stats:` and `/metrics`: the hub's, with the connections' own in their place.
    func statisticsCounters() -> [(String, Int)] {
        hub.statisticsCounters(connections: connectionStatistics.named)
    }
}
