import Foundation

/// Where a ``WriteQueue`` commits: a backend that applies a batch of writes atomically.
package protocol BatchSink: AnyObject {
    /// Applies all the writes in one transaction, or none of them when it throws.
    func commit(_ writes: [StoreWrite]) throws(StoreError)
    /// Releases the backend's resources; called once, on the writer thread, after the last commit.
    func close()
}

/// The write path shared by both stores: callers append under a lock and signal; one writer thread takes
/// everything queued, commits it in transactions of at most `maximumBatchSize` writes and reports each to the
/// commit handler. See ``RunStore`` for the failure policy.
package final class WriteQueue: @unchecked Sendable {  // Shared state under `condition`; the sink, the writer thread's.
    /// The writer's lifecycle.
    private enum State {
        case running
        case stopping
        case stopped
    }

    private let configuration: StoreConfiguration
    private let sink: any BatchSink
    private let condition = NSCondition()
    private let label: String

    // Guarded by `condition`.
    private var pending: [StoreWrite] = []
    private var submitted: UInt64 = 0
    private var processed: UInt64 = 0
    private var flushWaiters = 0
    private var state = State.running
    private var handler: (@Sendable (CommitReceipt) -> Void)?
    private var loggedSubmitAfterClose = false
    private var retainedCount = 0
    /// Writes taken off `pending` by the writer so far (they are numbered in submission order), and how many
    /// of the first are done: committed, or dropped for good after failing alone. A failed batch kept for a
    /// retry does not count until its retry commits.
    private var takenCount: UInt64 = 0
    private var committedThrough: UInt64 = 0

    /// Writes kept after a failed batch, to go first in the next attempt. Writer thread only.
    private var retained: [StoreWrite] = []

    package init(configuration: StoreConfiguration, sink: any BatchSink, label: String) {
        self.configuration = configuration
        self.sink = sink
        self.label = label
        BackgroundThread.start(named: "RunStore writer") { [self] in writerLoop() }
    }

    package func submit(_ write: StoreWrite) {
        condition.lock()
        guard state == .running else {
            let first = !loggedSubmitAfterClose
            loggedSubmitAfterClose = true
            condition.unlock()
            if first { log("write submitted after close() was ignored") }
            return
        }
        pending.append(write)
        submitted &+= 1
        // Only the writer waits on the condition besides flushers; a signal per write is cheap when nobody waits.
        if pending.count == 1 || pending.count >= configuration.maximumBatchSize { condition.broadcast() }
        condition.unlock()
    }

    package func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void) {
        condition.lock()
        self.handler = handler
        condition.unlock()
    }

    /// Writes submitted and not yet committed (or failed and reported).
    package var pendingWriteCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return Int(submitted &- processed)
    }

    /// Writes kept in memory after failed batches, waiting for a retry.
    package var retainedWriteCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return retainedCount
    }

    package func flush() {
        _ = waitForWritesSubmitted(toReach: { processed })
    }

    /// Blocks until every write submitted before the call is committed: past failed batches, through their
    /// retries, however long the storage takes to come back. What a reply saying "changed" waits for. Throws
    /// only when the store closes first.
    package func flushCommitted() throws(StoreError) {
        guard waitForWritesSubmitted(toReach: { committedThrough }) else {
            throw StoreError(.misuse, "the store closed before the change was stored")
        }
    }

    /// Waits (the writer told to skip its batch delay) until `count` reaches the writes submitted before the
    /// call, or the writer stopped; whether it reached them.
    private func waitForWritesSubmitted(toReach count: () -> UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let target = submitted
        flushWaiters += 1
        condition.broadcast()
        while count() < target && state != .stopped { condition.wait() }
        flushWaiters -= 1
        return count() >= target
    }

    package func close() {
        condition.lock()
        if state == .running { state = .stopping }
        condition.broadcast()
        while state != .stopped { condition.wait() }
        condition.unlock()
    }

    // MARK: Writer thread

    private func writerLoop() {
        while let (taken, firstNumber) = nextWrites() {
            var start = 0
            repeat {
                let end = min(start + configuration.maximumBatchSize, taken.count)
                commit(Array(taken[start..<end]), through: firstNumber &+ UInt64(end) &- 1)
                condition.lock()
                processed &+= UInt64(end - start)
                condition.broadcast()
                condition.unlock()
                start = end
            } while start < taken.count
        }
        if !retained.isEmpty {
            log("closing with \(retained.count) writes that could not be committed; they are lost")
        }
        sink.close()
        condition.lock()
        state = .stopped
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for work and takes everything queued, with the number of its first write; nil when it is time to
    /// stop. Returns an empty array when only retained writes are due for a retry.
    private func nextWrites() -> (writes: [StoreWrite], firstNumber: UInt64)? {
        condition.lock()
        defer { condition.unlock() }
        // The retry of retained writes is due at a fixed time: a wake-up before it (a flush, a spurious one) must
        // not start the interval again, or a steady trickle of them would put the retry off for ever.
        var retryAt: Date?
        while pending.isEmpty {
            if state != .running {
                // One last attempt for writes kept after failures, then stop.
                if retained.isEmpty { return nil }
                state = .stopping
                return retainedFinalAttempt().map { ($0, takenCount &+ 1) }
            }
            if retained.isEmpty {
                condition.wait()
                continue
            }
            let deadline = retryAt ?? Date(timeIntervalSinceNow: configuration.retainedRetryInterval)
            retryAt = deadline
            if !condition.wait(until: deadline) || Date() >= deadline {
                if pending.isEmpty { return ([], takenCount &+ 1) }
            }
        }
        if configuration.maximumBatchDelay > 0 {
            let deadline = Date(timeIntervalSinceNow: configuration.maximumBatchDelay)
            while pending.count < configuration.maximumBatchSize, flushWaiters == 0, state == .running {
                if !condition.wait(until: deadline) { break }
            }
        }
        let taken = pending
        pending = []
        pending.reserveCapacity(min(taken.count, configuration.maximumBatchSize))
        let first = takenCount &+ 1
        takenCount &+= UInt64(taken.count)
        return (taken, first)
    }

    private var finalAttemptDone = false
    /// The number of the last write among those kept for a retry (writer thread only).
    private var retainedThrough: UInt64 = 0

    private func retainedFinalAttempt() -> [StoreWrite]? {
        if finalAttemptDone { return nil }
        finalAttemptDone = true
        return []
    }

    /// Commits one batch (after any retained writes), retrying as the failure policy says, and reports it.
    /// `through`: the number of the batch's last write (or, for an empty one, of the write before it).
    private func commit(_ batch: [StoreWrite], through: UInt64) {
        let writes = retained.isEmpty ? batch : retained + batch
        let number = max(through, retainedThrough)
        retained = []
        guard !writes.isEmpty else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        var receipt = CommitReceipt()
        var delay = configuration.retryBackoff
        var attempt = 0
        while true {
            do throws(StoreError) {
                try sink.commit(writes)
                receipt.acknowledgements = Self.acknowledgements(of: writes)
                receipt.committedSequences = Self.committedSequences(of: writes)
                break
            } catch {
                if !error.isTransient {
                    receipt = commitIndividually(writes, firstError: error)
                    break
                }
                if attempt >= configuration.retryAttempts {
                    retained = writes
                    receipt.failure = error
                    receipt.affectedRuns = Set(writes.compactMap(\.runID))
                    log("batch of \(writes.count) writes failed after \(attempt + 1) attempts, kept for retry: \(error)")
                    break
                }
                attempt += 1
                Thread.sleep(forTimeInterval: delay)
                delay *= 2
            }
        }
        receipt.batchSize = writes.count
        receipt.duration = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        condition.lock()
        retainedCount = retained.count
        if retained.isEmpty {
            committedThrough = max(committedThrough, number)
            condition.broadcast()
        } else {
            retainedThrough = number
        }
        let handler = self.handler
        condition.unlock()
        handler?(receipt)
    }

    /// After a permanent failure: commits each write alone so one bad write cannot block the rest; the writes
    /// that fail alone are dropped with a log line.
    private func commitIndividually(_ writes: [StoreWrite], firstError: StoreError) -> CommitReceipt {
        var receipt = CommitReceipt(failure: firstError)
        for (index, write) in writes.enumerated() {
            do throws(StoreError) {
                try sink.commit([write])
                if let fix = write.storedFix {
                    receipt.committedSequences[fix.runID] = max(receipt.committedSequences[fix.runID] ?? 0, fix.sequence)
                }
                if case .fix(let fix, let acknowledgement?) = write { receipt.acknowledgements[fix.runID] = acknowledgement }
            } catch {
                if error.isTransient {
                    // The disk went away meanwhile: keep this and the rest for retry.
                    retained = Array(writes[index...])
                    receipt.failure = error
                    receipt.affectedRuns.formUnion(retained.compactMap(\.runID))
                    log("batch failed, \(retained.count) writes kept for retry: \(error)")
                    return receipt
                }
                if let run = write.runID { receipt.affectedRuns.insert(run) }
                receipt.failure = error
                log("dropping a write that cannot be stored (\(write.summary)): \(error)")
            }
        }
        return receipt
    }

    /// Per run, the highest sequence of its fixes in the writes.
    static func committedSequences(of writes: [StoreWrite]) -> [Int64: Int64] {
        var sequences: [Int64: Int64] = [:]
        for index in writes.indices {
            guard let fix = writes[index].storedFix else { continue }
            if fix.sequence > sequences[fix.runID] ?? 0 { sequences[fix.runID] = fix.sequence }
        }
        return sequences
    }

    /// Per run, the acknowledgement of the last fix that carries one.
    static func acknowledgements(of writes: [StoreWrite]) -> [Int64: String] {
        // The newest acknowledgement of each run wins: from the end, each run's text is read once (reading it
        // copies the whole write; the fix alone is read in place).
        var acknowledgements: [Int64: String] = [:]
        for index in writes.indices.reversed() {
            guard let fix = writes[index].storedFix, acknowledgements[fix.runID] == nil,
                  let (run, text) = writes[index].fixAcknowledgement else { continue }
            acknowledgements[run] = text
        }
        return acknowledgements
    }

    private func log(_ message: String) {
        FileHandle.standardError.write(Data("RunStore (\(label)): \(message)\n".utf8))
    }
}

extension StoreWrite {
    /// A short description for log lines.
    var summary: String {
        switch self {
        case .runner(let name, _, _): "runner \(name)"
        case .runStarted(let id, _, _): "start of run \(id)"
        case .runHeld(let id, _, _): "held start of run \(id)"
        case .fix(let fix, _): "fix \(fix.sequence) of run \(fix.runID)"
        case .award(let award): "award \(award.award.badge.id) \(award.award.tier.rawValue) of run \(award.runID)"
        case .runFinished(let record, _, _): "end of run \(record.id)"
        case .history(let runner, _): "badge history of \(runner)"
        case .imported(let record): "import record of run \(record.runID)"
        case .device(let token): "device token of \(token.runner)"
        case .revokeDevice(let runner, _, _): "device revocation for \(runner)"
        case .privacy(let runner, _): "privacy of \(runner)"
        case .share(let token): "share token of \(token.runner)"
        case .revokeShare(let runner, _, _): "share revocation for \(runner)"
        case .course(let course): "course \(course.name)"
        case .removeCourse(let name): "removal of course \(name)"
        }
    }
}
