import Foundation
import Locking

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
package final class WriteQueue: Sendable {
    /// The writer's lifecycle.
    private enum Phase {
        case running
        case stopping
        case stopped
    }

    /// What the callers and the writer share, behind one lock.
    private struct Shared {
        var pending: [StoreWrite] = []
        var submitted: UInt64 = 0
        var processed: UInt64 = 0
        var flushWaiters = 0
        var phase = Phase.running
        var handler: (@Sendable (CommitReceipt) -> Void)?
        var loggedSubmitAfterClose = false
        var retainedCount = 0
        /// Writes taken off `pending` by the writer so far (they are numbered in submission order), and how
        /// many of the first are done: committed, or dropped for good after failing alone. A failed batch kept
        /// for a retry does not count until its retry commits.
        var takenCount: UInt64 = 0
        var committedThrough: UInt64 = 0
    }

    /// The writer thread's own state.
    private struct Writer {
        /// Writes kept after a failed batch, to go first in the next attempt.
        var retained: [StoreWrite] = []
        /// The number of the last write among those kept for a retry.
        var retainedThrough: UInt64 = 0
        var finalAttemptDone = false
    }

    /// What the writer does next, decided under the lock.
    private enum Next {
        /// Commit these (none: only the retained writes are due for a retry), numbered from `first`.
        case writes([StoreWrite], first: UInt64)
        /// Closing with retained writes: one last attempt at them.
        case finalAttempt(first: UInt64)
        /// Closing, nothing left to try.
        case stop
    }

    private let configuration: StoreConfiguration
    private let label: String
    private let shared = Locked(Shared())
    /// The backend. Only the writer thread uses it (its lock is never contended: it is what makes the sink,
    /// a set of C handles, this queue's to hand to its thread).
    private let sink: Locked<any BatchSink>

    package init(configuration: StoreConfiguration, sink: any BatchSink, label: String) {
        self.configuration = configuration
        self.sink = Locked(sink)
        self.label = label
        BackgroundThread.start(named: "RunStore writer") { [self] in writerLoop() }
    }

    package func submit(_ write: StoreWrite) {
        let maximumBatchSize = configuration.maximumBatchSize
        let (accepted, wake, firstRefusal) = shared.withLock { shared -> (Bool, Bool, Bool) in
            guard shared.phase == .running else {
                defer { shared.loggedSubmitAfterClose = true }
                return (false, false, !shared.loggedSubmitAfterClose)
            }
            shared.pending.append(write)
            shared.submitted &+= 1
            // Only the writer waits besides flushers; a wake-up per write is cheap when nobody waits.
            return (true, shared.pending.count == 1 || shared.pending.count >= maximumBatchSize, false)
        }
        if wake { shared.broadcast() }
        if !accepted, firstRefusal { log("write submitted after close() was ignored") }
    }

    package func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void) {
        shared.withLock { $0.handler = handler }
    }

    /// Writes submitted and not yet committed (or failed and reported).
    package var pendingWriteCount: Int {
        shared.withLock { Int($0.submitted &- $0.processed) }
    }

    /// Writes kept in memory after failed batches, waiting for a retry.
    package var retainedWriteCount: Int {
        shared.withLock { $0.retainedCount }
    }

    package func flush() {
        _ = waitForWritesSubmitted(toReach: \.processed)
    }

    /// Blocks until every write submitted before the call is committed: past failed batches, through their
    /// retries, however long the storage takes to come back. What a reply saying "changed" waits for. Throws
    /// only when the store closes first.
    package func flushCommitted() throws(StoreError) {
        guard waitForWritesSubmitted(toReach: \.committedThrough) else {
            throw StoreError(.misuse, "the store closed before the change was stored")
        }
    }

    /// Waits (the writer told to skip its batch delay) until `count` reaches the writes submitted before the
    /// call, or the writer stopped; whether it reached them.
    private func waitForWritesSubmitted(toReach count: KeyPath<Shared, UInt64>) -> Bool {
        let target = shared.withLock { shared in
            shared.flushWaiters += 1
            return shared.submitted
        }
        shared.broadcast()
        return shared.withLock(when: { $0[keyPath: count] >= target || $0.phase == .stopped }) { shared in
            shared.flushWaiters -= 1
            return shared[keyPath: count] >= target
        }
    }

    package func close() {
        shared.withLock { if $0.phase == .running { $0.phase = .stopping } }
        shared.broadcast()
        shared.withLock(when: { $0.phase == .stopped }) { _ in }
    }

    // MARK: Writer thread

    private func writerLoop() {
        var writer = Writer()
        while let (taken, firstNumber) = nextWrites(&writer) {
            var start = 0
            repeat {
                let end = min(start + configuration.maximumBatchSize, taken.count)
                commit(Array(taken[start..<end]), through: firstNumber &+ UInt64(end) &- 1, writer: &writer)
                shared.withLock { $0.processed &+= UInt64(end - start) }
                shared.broadcast()
                start = end
            } while start < taken.count
        }
        if !writer.retained.isEmpty {
            log("closing with \(writer.retained.count) writes that could not be committed; they are lost")
        }
        sink.withLock { $0.close() }
        shared.withLock { $0.phase = .stopped }
        shared.broadcast()
    }

    /// Waits for work and takes everything queued, with the number of its first write; nil when it is time to
    /// stop. Returns an empty array when only retained writes are due for a retry.
    private func nextWrites(_ writer: inout Writer) -> (writes: [StoreWrite], firstNumber: UInt64)? {
        let isRetaining = !writer.retained.isEmpty
        let retryInterval = configuration.retainedRetryInterval
        let batchDelay = configuration.maximumBatchDelay, maximumBatchSize = configuration.maximumBatchSize
        // The retry of retained writes is due at a fixed time: a wake-up before it (a flush, a spurious one) must
        // not start the interval again, or a steady trickle of them would put the retry off for ever.
        var retryAt: Date?
        // Set once there is work: the batch waits (for more writes) until then at the most.
        var batchDeadline: Date?
        let next = shared.withLock(stepping: { shared, timedOut -> LockStep<Next> in
            func take() -> LockStep<Next> {
                let taken = shared.pending
                shared.pending = []
                shared.pending.reserveCapacity(min(taken.count, maximumBatchSize))
                let first = shared.takenCount &+ 1
                shared.takenCount &+= UInt64(taken.count)
                return .done(.writes(taken, first: first))
            }
            func isFilling() -> Bool {
                shared.pending.count < maximumBatchSize && shared.flushWaiters == 0 && shared.phase == .running
            }
            if let batchDeadline {
                return timedOut || !isFilling() ? take() : .waitUntil(batchDeadline)
            }
            if shared.pending.isEmpty {
                if let retryAt, timedOut || Date() >= retryAt { return .done(.writes([], first: shared.takenCount &+ 1)) }
                if shared.phase != .running {
                    // One last attempt for writes kept after failures, then stop.
                    guard isRetaining else { return .done(.stop) }
                    shared.phase = .stopping
                    return .done(.finalAttempt(first: shared.takenCount &+ 1))
                }
                guard isRetaining else { return .wait }
                let deadline = retryAt ?? Date(timeIntervalSinceNow: retryInterval)
                retryAt = deadline
                return .waitUntil(deadline)
            }
            guard batchDelay > 0 else { return take() }
            let deadline = Date(timeIntervalSinceNow: batchDelay)
            batchDeadline = deadline
            return isFilling() ? .waitUntil(deadline) : take()
        })
        switch next {
        case .writes(let writes, let first):
            return (writes, first)
        case .finalAttempt(let first):
            guard !writer.finalAttemptDone else { return nil }
            writer.finalAttemptDone = true
            return ([], first)
        case .stop:
            return nil
        }
    }

    /// Commits one batch (after any retained writes), retrying as the failure policy says, and reports it.
    /// `through`: the number of the batch's last write (or, for an empty one, of the write before it).
    private func commit(_ batch: [StoreWrite], through: UInt64, writer: inout Writer) {
        let writes = writer.retained.isEmpty ? batch : writer.retained + batch
        let number = max(through, writer.retainedThrough)
        writer.retained = []
        guard !writes.isEmpty else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        var receipt = CommitReceipt()
        var delay = configuration.retryBackoff
        var attempt = 0
        while true {
            do throws(StoreError) {
                try sink.withLock { sink throws(StoreError) in try sink.commit(writes) }
                receipt.acknowledgements = Self.acknowledgements(of: writes)
                receipt.committedSequences = Self.committedSequences(of: writes)
                break
            } catch {
                if !error.isTransient {
                    receipt = commitIndividually(writes, firstError: error, writer: &writer)
                    break
                }
                if attempt >= configuration.retryAttempts {
                    writer.retained = writes
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
        let retainedCount = writer.retained.count
        if retainedCount > 0 { writer.retainedThrough = number }
        let handler = shared.withLock { shared in
            shared.retainedCount = retainedCount
            if retainedCount == 0 { shared.committedThrough = max(shared.committedThrough, number) }
            return shared.handler
        }
        if retainedCount == 0 { shared.broadcast() }
        handler?(receipt)
    }

    /// After a permanent failure: commits each write alone so one bad write cannot block the rest; the writes
    /// that fail alone are dropped with a log line.
    private func commitIndividually(_ writes: [StoreWrite], firstError: StoreError,
                                    writer: inout Writer) -> CommitReceipt {
        var receipt = CommitReceipt(failure: firstError)
        for (index, write) in writes.enumerated() {
            do throws(StoreError) {
                try sink.withLock { sink throws(StoreError) in try sink.commit([write]) }
                if let fix = write.storedFix {
                    receipt.committedSequences[fix.runID] = max(receipt.committedSequences[fix.runID] ?? 0, fix.sequence)
                }
                if case .fix(let fix, let acknowledgement?) = write { receipt.acknowledgements[fix.runID] = acknowledgement }
            } catch {
                if error.isTransient {
                    // The disk went away meanwhile: keep this and the rest for retry.
                    writer.retained = Array(writes[index...])
                    receipt.failure = error
                    receipt.affectedRuns.formUnion(writer.retained.compactMap(\.runID))
                    log("batch failed, \(writer.retained.count) writes kept for retry: \(error)")
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
