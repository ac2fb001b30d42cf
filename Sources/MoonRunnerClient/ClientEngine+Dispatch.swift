import Wire

/// Incoming lines: replies go to the request they answer, live events to the owner.
///
/// The server answers one connection's commands in the order of the commands, history answers included
/// (protocol.md §1), so the pending requests form a queue and its front owns the next reply: an `ok:`,
/// `done:`, `stats:`, `end:` or `err:` that fits the front request answers it. Anything else is a pushed
/// event — including an `err:` the front request cannot get (a `storage` failure of a batch of fixes in front
/// of a `ping:`, `replaced`, `shutting_down`), which is published and fails nothing.
extension ClientEngine {
    /// Handles one line from the server.
    func handleLine(_ event: ServerEvent) {
        // A multi-line answer in progress takes every line up to its `done:` (the server sends them together).
        if pending.first?.collecting == true {
            if case .done = event {
                finishFront(with: event)
            } else {
                pending[0].lines.append(event)
            }
            return
        }
        let front = pending.first
        switch event {
        case .ok(let ok):
            if let front, front.word == ok.what {
                if case .identify = front.command { identified(by: ok) }
                finishFront(with: event)
            }
            publish(.ok(ok))
        case .error(let error):
            let clientError = MoonRunnerClientError(error)
            if let front, front.accepts(error.code) {
                let request = pending.removeFirst()
                if case .identify = request.command {
                    // The name is not ours: whoever waits for the end of the run will not get one.
                    for waiter in stopRequest?.waiters ?? [] { waiter(.failure(clientError)) }
                    stopRequest = nil
                }
                request.complete(.failure(clientError))
            }
            publish(.error(clientError))
        case .ended(let end):
            publish(.ended(end))
            if end.runner == name { runEnded(end, event: event) }
        case .ack(let ack):
            if ack.runner == name { owner?.recordAcknowledged(unacked.acknowledge(ack.timestamp)) }
            publish(.ack(ack))
        case .runListItem, .runSummary, .board, .help, .leader:
            if let front, front.isFirstAnswerLine(event) {
                pending[0].collecting = true
                pending[0].lines.append(event)
            } else {
                publish(.other(event))
            }
        case .done(let done):
            if let front, front.word == done.what {
                finishFront(with: event)
            } else {
                publish(.other(event))
            }
        case .stats:
            if let front, front.word == Command.stats.word {
                finishFront(with: event)
            } else {
                publish(.other(event))
            }
        default:
            if let live = ClientEvent(live: event) { publish(live) }
        }
    }

    /// Completes the front request with its lines plus `last`, and publishes history answers.
    private func finishFront(with last: ServerEvent) {
        var request = pending.removeFirst()
        request.lines.append(last)
        if let answer = HistoryAnswer(command: request.command, lines: request.lines) {
            publish(.history(answer))
        }
        request.complete(.success(request.lines))
    }

    /// `ok:iam`: keep the key, then send the fixes waiting for an ack and any pending `stop:`.
    private func identified(by ok: OkEvent) {
        identified = true
        if let key = ok["key"] { self.key = key }
        if let name = ok["name"] { self.name = name }
        owner?.recordIdentity(name: name, key: key)
        for fix in unacked.fixes { write(.location(fix)) }
        sendStopIfRequested()
    }

    /// Sends the requested `stop:` once identified (fixes sent before it are already written, in order).
    func sendStopIfRequested() {
        guard identified, hasStreams, let request = stopRequest else { return }
        stopRequest = nil
        send(.stop(save: request.save), completions: request.waiters)
    }

    /// The client's own run ended: nothing more to resend, and a waiting `stop` is answered. The `end:` is
    /// the front `stop:`'s reply; a `stop:` further back (the run ended by itself first) learns the end now and
    /// stays queued, without waiters, for its own reply (`err:no_run`).
    private func runEnded(_ end: RunEndedEvent, event: ServerEvent) {
        owner?.recordAcknowledged(unacked.count)
        unacked.removeAll()
        if case .stop = pending.first?.command {
            pending.removeFirst().complete(.success([event]))
        } else if let index = pending.firstIndex(where: { if case .stop = $0.command { true } else { false } }) {
            pending[index].complete(.success([event]))
            pending[index].completions = []
        }
    }
}

extension HistoryAnswer {
    /// The typed answer of a history command from its lines (nil for other commands or a missing summary).
    init?(command: Command, lines: [ServerEvent]) {
        switch command {
        case .listRuns:
            let items = lines.compactMap { line -> RunListItemEvent? in
                if case .runListItem(let item) = line { return item }
                return nil
            }
            self = .runs(RunPage(items: items, hasMore: lines.contains { if case .done(let done) = $0 { done.more } else { false } }))
        case .showRun:
            guard let details = RunDetails(lines: lines) else { return nil }
            self = .run(details)
        case .showBadges:
            self = .badges(lines.compactMap { line -> BoardEvent? in
                if case .board(let board) = line { return board }
                return nil
            })
        default:
            return nil
        }
    }
}
