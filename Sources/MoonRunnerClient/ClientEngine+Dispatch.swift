import Wire

/// Incoming lines: answers go to the pending request they answer, live events to the owner.
///
/// Answers are matched by their word (`ok:WHAT`, `done:WHAT`, the first line of a history answer), not by
/// position: the server answers history off its loop, so a later command's `ok:` may arrive first.
extension ClientEngine {
    /// Handles one line from the server.
    func handleLine(_ event: ServerEvent) {
        // A multi-line answer in progress takes every line up to its `done:` (the server sends them together).
        if let index = pending.firstIndex(where: \.collecting) {
            if case .done = event {
                finish(at: index, with: event)
            } else {
                pending[index].lines.append(event)
            }
            return
        }
        switch event {
        case .ok(let ok):
            if let index = pending.firstIndex(where: { $0.word == ok.what }) {
                if case .identify = pending[index].command { identified(by: ok) }
                finish(at: index, with: event)
            }
            publish(.ok(ok))
        case .error(let error):
            let clientError = MoonRunnerClientError(error)
            if let index = pending.firstIndex(where: { $0.accepts(error.code) }) {
                let request = pending.remove(at: index)
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
            if ack.runner == name { unacked.acknowledge(ack.timestamp) }
            owner?.recordUnacked(unacked.count)
            publish(.ack(ack))
        case .runListItem, .runSummary, .board, .help:
            if let index = pending.firstIndex(where: { $0.isFirstAnswerLine(event) }) {
                pending[index].collecting = true
                pending[index].lines.append(event)
            } else {
                publish(.other(event))
            }
        case .done(let done):
            if let index = pending.firstIndex(where: { $0.word == done.what }) {
                finish(at: index, with: event)
            } else {
                publish(.other(event))
            }
        case .stats:
            if let index = pending.firstIndex(where: { $0.word == Command.stats.word }) {
                finish(at: index, with: event)
            } else {
                publish(.other(event))
            }
        default:
            if let live = ClientEvent(live: event) { publish(live) }
        }
    }

    /// Completes the request at `index` with its lines plus `last`, and publishes history answers.
    private func finish(at index: Int, with last: ServerEvent) {
        var request = pending.remove(at: index)
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

    /// The client's own run ended: nothing more to resend, and a waiting `stop` is answered.
    private func runEnded(_ end: RunEndedEvent, event: ServerEvent) {
        unacked.removeAll()
        owner?.recordUnacked(0)
        if let index = pending.firstIndex(where: { if case .stop = $0.command { true } else { false } }) {
            let request = pending.remove(at: index)
            request.complete(.success([event]))
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
