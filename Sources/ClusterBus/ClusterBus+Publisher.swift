import Foundation
import Locking

/// The publisher thread: the queue into Redis, a pipelined batch at a time.
extension ClusterBus {
    /// What one pass of the publisher sends: `count` events from the head of the queue packed into stream
    /// entries, and a wake for the reader.
    private struct Batch {
        let entries: [PackedEntry]
        let count: Int
        let wake: Bool
    }

    /// The publisher thread's body: until close(), take a batch, make sure of a connection, send it, and
    /// remove it from the queue once Redis has answered for every entry. A batch that fails with the
    /// connection is sent again, whole and packed as it was, on the next one (the script skips the entries
    /// Redis already has: a batch packed anew, with events queued since, would number its entries otherwise).
    func publishLoop() {
        var backoff = ReconnectBackoff(initial: configuration.reconnectInitialDelay,
                                       maximum: configuration.reconnectMaximumDelay)
        var connection: (redis: RedisConnection, sha: [UInt8])?
        var everConnected = false
        let counterKey = Array((configuration.internalKeyPrefix + "sent:" + instance).utf8)
        let nodeField = Array(configuration.nodeField.utf8), node = Array(configuration.node.utf8)
        var unsent: Batch?
        while let batch = unsent ?? nextBatch() {
            unsent = nil
            do throws(BusError) {
                if connection == nil {
                    guard let redis = try connect(.publisher, timeout: configuration.commandTimeout) else { break }
                    let sha = try loadScript(on: redis)
                    connection = (redis, sha)
                    notify(.connected(.publisher, endpoint), reconnect: everConnected)
                    everConnected = true
                }
                guard let (redis, sha) = connection else { continue }
                try send(batch, on: redis, sha: sha, counterKey: counterKey, nodeField: nodeField, node: node)
                backoff.reset()
            } catch {
                if connection != nil {
                    disconnect(.publisher)
                    connection = nil
                }
                unsent = batch
                guard waitToRetry(.publisher, after: error, backoff: &backoff, on: publishing) else { break }
            }
        }
        if connection != nil { disconnect(.publisher) }
    }

    /// Waits for something to send; nil once the bus is closing. Packed off the lock, which the loops publish under.
    private func nextBatch() -> Batch? {
        let batchSize = max(1, configuration.publishBatchSize)
        if configuration.publishLinger > 0 {
            // Something to send, then a moment more for the rest of a burst: fewer, fuller entries.
            guard publishing.withLock(when: { $0.count > 0 || $0.wakePending || $0.closing }, { !$0.closing }) else {
                return nil
            }
            publishing.withLock(when: { $0.count >= batchSize || $0.closing },
                                before: Date(timeIntervalSinceNow: configuration.publishLinger)) { _, _ in }
        }
        let taken = publishing.withLock(when: { $0.count > 0 || $0.wakePending || $0.closing }) {
            queue -> (events: [OutgoingEntry], wake: Bool)? in
            guard !queue.closing else { return nil }
            let end = min(queue.entries.count, queue.head + batchSize)
            defer { queue.wakePending = false }
            return (Array(queue.entries[queue.head..<end]), queue.wakePending)
        }
        return taken.map { Batch(entries: PackedEntry.pack($0.events), count: $0.events.count, wake: $0.wake) }
    }

    /// `SCRIPT LOAD`s the publish script on a new connection (Redis forgets scripts when it restarts); its SHA1.
    private func loadScript(on redis: RedisConnection) throws(BusError) -> [UInt8] {
        let reply = try redis.call([Array("SCRIPT".utf8), Array("LOAD".utf8), Array(PublishScript.source.utf8)],
                                   context: "SCRIPT LOAD on \(endpoint)")
        guard case .string(let sha) = reply, sha.count == 40 else {
            throw BusError(.unexpectedReply, "SCRIPT LOAD on \(endpoint) answered \(reply)")
        }
        return sha
    }

    /// Sends a batch in one pipeline (a wake for the reader, then the entries in script calls of
    /// ``PublishScript/entriesPerCall``) and reads every reply; then takes the entries off the queue. An entry
    /// Redis refuses is dropped and reported; NOSCRIPT throws, so that the script is loaded again on a new
    /// connection and the batch resent.
    private func send(_ batch: Batch, on redis: RedisConnection, sha: [UInt8], counterKey: [UInt8],
                      nodeField: [UInt8], node: [UInt8]) throws(BusError) {
        let wakeKey = Array((configuration.internalKeyPrefix + "wake:" + instance).utf8)
        if batch.wake {
            try redis.append(["XADD", "MAXLEN", "1", "*", "wake", "1"].map { Array($0.utf8) }.inserting(wakeKey, at: 1))
            try redis.append([Array("PEXPIRE".utf8), wakeKey, Array("3600000".utf8)])
        }
        var runs: [ArraySlice<PackedEntry>] = []
        var start = batch.entries.startIndex
        while start < batch.entries.endIndex {
            let end = min(batch.entries.endIndex, start + PublishScript.entriesPerCall)
            runs.append(batch.entries[start..<end])
            start = end
        }
        for run in runs {
            try redis.append(PublishScript.arguments(sha: sha, entries: run, counterKey: counterKey, nodeField: nodeField,
                                                     node: node, configuration: configuration))
            // Written call by call: Redis runs one while the next is encoded.
            try redis.flush()
        }
        var refusals: [(stream: String, error: BusError, events: Int)] = []
        var wakeFailure: BusError?
        if batch.wake {
            for _ in 0..<2 {
                // A wake that fails costs the reader at most one block time (it rereads its subscriptions then).
                if case .error(let message) = try redis.reply() {
                    wakeFailure = BusError(.reply, "waking the reader: \(message)")
                }
            }
        }
        var added = 0, addedEntries = 0
        var failure: BusError?
        for run in runs {
            let reply = try redis.reply()
            if case .error(let message) = reply {
                // The whole call failed. NOSCRIPT (someone ran SCRIPT FLUSH: every call of the batch fails
                // alike): load the script again on a new connection and resend. Anything else (OOM refuses a
                // script that writes): the run is refused; a resend could not tell it from the runs after it.
                let error = BusError(.reply, "publishing \(run.count) entries: \(message)")
                if error.isReply(code: "NOSCRIPT") {
                    failure = failure ?? error
                } else {
                    refusals += run.map { ($0.stream, error, $0.events.count) }
                }
                continue
            }
            guard let results = reply.elements, results.count == run.count else {
                failure = failure ?? BusError(.unexpectedReply, "the publish script answered \(reply)")
                continue
            }
            for (entry, result) in zip(run, results) {
                switch result {
                case .integer:
                    // 1: added now; 0: added before (a resent batch)
                    added += entry.events.count
                    addedEntries += 1
                case .error(let message):
                    refusals.append((entry.stream, BusError(.reply, "publishing to \(entry.stream): \(message)"),
                                     entry.events.count))
                default:
                    failure = failure ?? BusError(.unexpectedReply, "the publish script answered \(result) for an entry")
                }
            }
        }
        if let failure { throw failure }
        for refusal in refusals { onNotice(.refused(stream: refusal.stream, refusal.error)) }
        if let wakeFailure { onNotice(.refused(stream: String(decoding: wakeKey, as: UTF8.self), wakeFailure)) }
        let lowWater = configuration.publishQueueLowWater
        let drained = publishing.withLock { queue in
            queue.head += batch.count
            queue.counts.published += added
            queue.counts.publishedEntries += addedEntries
            queue.counts.refused += refusals.reduce(0) { $0 + $1.events }
            if queue.head > 4_096 && queue.head * 2 > queue.entries.count {
                queue.entries.removeFirst(queue.head)
                queue.head = 0
            }
            let drained = queue.isBacklogged && queue.count <= lowWater
            if drained { queue.isBacklogged = false }
            return drained
        }
        publishing.broadcast()
        if drained { onNotice(.publishQueueDrained) }
    }

    /// Reports a connection, counting it as a reconnect when there was one before.
    func notify(_ notice: ClusterBusNotice, reconnect: Bool) {
        if reconnect {
            publishing.withLock { $0.counts.reconnects += 1 }
        }
        onNotice(notice)
    }
}

private extension Array {
    func inserting(_ element: Element, at index: Int) -> [Element] {
        var copy = self
        copy.insert(element, at: index)
        return copy
    }
}
