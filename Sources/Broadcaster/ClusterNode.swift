import LiveCore
import ClusterBus
import Foundation
import RunStore
import Synchronization

/// Where a node's cluster is (`serve --cluster redis://HOST:PORT --node NAME`).
public struct ClusterSettings: Sendable {
    /// The Redis that carries the bus and the leases.
    public var redisURL: String
    /// This node's name in the bus, the leases, the log and `stats:`.
    public var node: String
    /// How long a run's lease lasts unless its owner renews it (every third of it): the longest a runner
    /// waits, after its node died, before another node takes its run over. Default 3 s.
    public var leaseSeconds: Double = 3
    /// The cluster's name (`serve --cluster-name`): the prefix of every key and stream it keeps in Redis, so
    /// that clusters sharing one Redis stay apart. Default `moonrunner`.
    public var name = ClusterStreams.defaultNamespace
    /// Events waiting for Redis at most (`serve --bus-queue`): past half of it the node reads no more fixes
    /// until a quarter is left (back-pressure, as for the store), so that none is dropped. Default 40,000.
    public var publishQueueCapacity = 40_000

    /// A node called `node` on the Redis at `redisURL`.
    public init(redisURL: String, node: String) {
        self.redisURL = redisURL
        self.node = node
    }
}

/// This process as one node of a cluster: its loops' events go out on the bus, the other nodes' come in and
/// are handled as another loop's (``RelayMessage``), and the runs it measures are leased in Redis so that a
/// runner whose node died can go on on any other.
///
/// - Out: each loop hands its turn's relays to ``publish(_:)`` at the end of the turn; every event and runner
///   change goes to the runner's partition stream, and to the cluster stream too except paces that come
///   within a second of the runner's last one there (``ClusterStreams``); the bus packs what a batch has for
///   one stream into one stream entry.
/// - In: every node reads the cluster stream, so each has a mirror of every live run (`watch:*`, late
///   joiners, the overview, `runs:` on any node) with its paces a second apart at most, and the partitions of
///   the runners its connections follow (each loop says which: ``follow(_:onLoop:)``), whose events it takes
///   in full from there rather than from the cluster stream. Each event carries its owner's number (the
///   owner's clock in microseconds, kept increasing), its SSE id on every node, the owner's included, and
///   what makes an event that comes twice (a partition being taken up) count once.
/// - Leases: `CLUSTER:lease:run:NAME`, taken when a run starts or is taken over, renewed by a thread of its own,
///   released when the run ends.
///
/// Blocking work (Redis, the store) runs on the bus's threads, the lease thread and `takeovers`; never on a loop.
final class ClusterNode: Sendable {
    let settings: ClusterSettings
    /// The cluster's streams in Redis, under its name.
    let streams: ClusterStreams
    let bus: ClusterBus
    let lease: ClusterLease
    /// The loops of this node; set once before any runs, read-only afterwards.
    private let servers = Mutex<[Server]>([])
    /// Runner names whose runs this node holds the lease of (loops add and remove; the lease thread reads).
    private let owned = Mutex<Set<String>>([])
    /// Event numbers made on this node: microseconds of the clock, kept increasing.
    private let sequence = Atomic<UInt64>(0)
    /// Entries handed to the loops and not handled yet; the bus reader waits above ``inboxHighWater``.
    private let inboxDepth = Atomic<Int>(0)
    private let inboxDrained = NSCondition()
    let inboxHighWater: Int
    /// Takeovers (store reads and lease calls), one at a time, off the loops.
    let takeovers = DispatchQueue(label: "moonrunner.cluster.takeover")
    private let stopping = Atomic<Bool>(false)
    private let renewerDone = DispatchSemaphore(value: 0)

    /// Connects to the cluster (in the background: a Redis that is down is retried) and starts renewing leases.
    init(settings: ClusterSettings, inboxHighWater: Int, log: ServerLog) throws(BusError) {
        self.settings = settings
        self.inboxHighWater = inboxHighWater
        streams = ClusterStreams(namespace: settings.name)
        lease = try ClusterLease(url: settings.redisURL, node: settings.node, keyPrefix: settings.name + ":lease:")
        let delivery = Mutex<ClusterNode?>(nil)
        var busConfiguration = ClusterBusConfiguration(node: settings.node)
        busConfiguration.internalKeyPrefix = settings.name + ":bus:"
        busConfiguration.setPublishQueue(capacity: settings.publishQueueCapacity)
        bus = try ClusterBus(url: settings.redisURL, configuration: busConfiguration,
                             onEntries: { entries in delivery.withLock { $0 }?.receive(entries) },
                             onNotice: { notice in
                                 log.write("cluster: \(notice)")
                                 if case .publishQueueDrained = notice { delivery.withLock { $0 }?.busDrained() }
                             })
        delivery.withLock { $0 = self }
        bus.subscribe(streams.cluster, from: .new)
        let renewer = Thread { [self] in renewLeases(log: log) }
        renewer.name = "cluster leases"
        renewer.start()
    }

    /// Registers the loops (once, before they run), the store the nodes share, and which loop owns a runner.
    func attach(_ servers: [Server], store: any RunStore, owner: @escaping @Sendable (String) -> Int) {
        self.servers.withLock { $0 = servers }
        orphanage.withLock { $0 = (store, owner, servers[0].configuration.resumeWindow) }
    }

    /// The shared store, the loop owning each runner and the resume window, for runs left without a node
    /// (``sweepOrphans(seenUnleased:log:)``).
    private let orphanage = Mutex<(store: any RunStore, owner: @Sendable (String) -> Int, resumeWindow: Double)?>(nil)

    /// The number of the next event made on this node.
    func nextSequence() -> UInt64 {
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1e6))
        var current = sequence.load(ordering: .relaxed)
        while true {
            let next = max(current + 1, now)
            let (exchanged, original) = sequence.compareExchange(expected: current, desired: next, ordering: .relaxed)
            if exchanged { return next }
            current = original
        }
    }

    // MARK: Out and in

    /// A loop's relays of one turn, onto the bus (events and runner changes; the rest is for this node's loops):
    /// each to its runner's partition, and to the cluster stream too unless it is a pace within a second of the
    /// last one of that runner there.
    func publish(_ messages: [HubNews]) {
        let now = Date().timeIntervalSince1970
        let summarized = summaryPaces.withLock { summary in messages.map { Self.isSummarized($0, at: now, in: &summary) } }
        for (message, summarized) in zip(messages, summarized) {
            let (runner, fields) = ClusterCoding.fields(of: message)
            // Two entries rather than one in both streams (`alsoTo`): a partition's events then pack whole, not
            // cut wherever one of them also goes to the cluster stream (3 events an entry instead of 30).
            let published = bus.publish(stream: streams.stream(of: runner), fields: fields)
                && (!summarized || bus.publish(stream: streams.cluster, fields: fields))
            if !published {
                dropped.add(1, ordering: .relaxed)
                // The other nodes get a snapshot of the run once the queue has room (``busDrained()``).
                gapped.withLock { if $0.count < Self.maximumGapped { $0.insert(runner) } }
            }
        }
    }

    /// When each live runner's last pace went to the cluster stream (its run's end forgets it): at most one
    /// entry per live run of the node.
    private let summaryPaces = Mutex<[String: Double]>([:])

    /// Whether `message` goes to the cluster stream too: everything but a pace that comes within a second of
    /// the runner's last one there (a recovered run's catch-up always goes: it rebuilds the mirrors).
    static func isSummarized(_ message: HubNews, at now: Double, in last: inout [String: Double]) -> Bool {
        guard case .event(let event) = message else { return true }
        switch event.kind {
        case .pace where !event.isCatchUp:
            if let previous = last[event.runner], now - previous < summaryInterval, now >= previous { return false }
            last[event.runner] = now
        case .ended:
            last[event.runner] = nil
        default:
            break
        }
        return true
    }

    /// The most often a runner's pace goes to the cluster stream, in seconds.
    static let summaryInterval = 1.0

    /// Loop `loop` now has followers of exactly `runners` by name: the bus reads the partitions of what every
    /// loop follows, and the cluster stream.
    func follow(_ runners: Set<String>, onLoop loop: Int) {
        // Under the lock: of two loops changing what they follow at once, the later set is the one read.
        following.withLock { following in
            following.byLoop[loop] = runners
            let partitions = streams.partitionStreams(of: following.byLoop.values.joined())
            guard partitions != following.partitions else { return }
            following.partitions = partitions
            // A new partition from a little before where this node is in the cluster stream (Redis's clock):
            // its runners' events count from the partition from now on, and what it holds of the last two
            // seconds covers those published while it is taken up; what the cluster stream brought already
            // counts once (``admits(_:from:in:cluster:heard:)``).
            let from = bus.position(of: streams.cluster).map { position in
                StreamPosition.after(StreamID(milliseconds: position.milliseconds > 2_000 ? position.milliseconds - 2_000 : 0,
                                              sequence: 0))
            } ?? .new
            bus.setSubscriptions(partitions.union([streams.cluster]), newFrom: from)
        }
    }

    /// The runners each loop follows, and the partitions read for them.
    private let following = Mutex<(byLoop: [Int: Set<String>], partitions: Set<String>)>(([:], []))

    /// The publish queue is back at its low-water mark: every loop that stopped reading fixes for it goes on
    /// (if the store and the other loops let it), and the runners whose events were dropped meanwhile are sent
    /// to the other nodes as they stand, so that their followers there see what they missed.
    private func busDrained() {
        let loops = servers.withLock { $0 }
        for server in loops {
            server.loop.execute { server.core.value.resumeIfStoreCaughtUp() }
        }
        let runners = gapped.withLock { gapped in
            defer { gapped = [] }
            return gapped
        }
        guard !runners.isEmpty, let owner = orphanage.withLock({ $0?.owner }) else { return }
        for runner in runners {
            let server = loops[min(loops.count - 1, owner(runner))]
            server.loop.execute { server.core.value.resendToCluster(runner) }
        }
    }

    /// Runners some of whose events the full publish queue refused, since it last drained (at most
    /// ``maximumGapped``: past that, the rest are counted in `bus_dropped` only).
    private let gapped = Mutex<Set<String>>([])
    static let maximumGapped = 100_000

    /// Whether a message read from `stream`, published by `node`, is handed on: a runner's event if it is newer
    /// than the last one heard of that runner from that node (its owner's numbers grow: an event read in both
    /// its partition and the cluster stream counts once, and a pace older than one heard already is stale),
    /// or from another node (a run taken over); runner claims, tokens and shares from the cluster stream only.
    static func admits(_ message: HubNews, from node: String, in stream: String, cluster: String,
                       heard: inout [String: (node: String, number: UInt64)]) -> Bool {
        guard case .event(let event) = message else { return stream == cluster }
        if let last = heard[event.runner], last.node == node, event.sequence <= last.number { return false }
        if heard.count >= maximumHeard, heard[event.runner] == nil { heard.removeAll() }
        heard[event.runner] = (node, event.sequence)
        return true
    }

    /// The last event number heard of each runner, and from which node (reader thread; bounded: past
    /// ``maximumHeard`` runners it starts again, at worst an event read in both streams counting twice).
    private let heard = Mutex<[String: (node: String, number: UInt64)]>([:])
    static let maximumHeard = 500_000

    /// Entries refused by a full publish queue (Redis down too long): counted in `stats:`.
    let dropped = Atomic<Int>(0)

    /// The bus reader's entries: decoded and handed to every loop, the reader waiting while they are behind. A
    /// runner's events come from its partition where this node reads it (in full, in order), from the cluster
    /// stream otherwise, and each counts once (``admits(_:from:in:cluster:heard:)``: while a partition is
    /// taken up, its first entries overlap what the cluster stream brought); anything else comes from the
    /// cluster stream.
    private func receive(_ entries: [BusEntry]) {
        let cluster = streams.cluster
        let partitions = following.withLock { $0.partitions }
        let messages = heard.withLock { heard in
            entries.compactMap { entry -> HubNews? in
                guard let message = ClusterCoding.message(of: entry) else { return nil }
                if case .event(let event) = message,
                   (entry.stream == cluster) == partitions.contains(streams.stream(of: event.runner)) { return nil }
                return Self.admits(message, from: entry.node, in: entry.stream, cluster: cluster, heard: &heard) ? message : nil
            }
        }
        guard !messages.isEmpty else { return }
        let loops = servers.withLock { $0 }
        inboxDepth.add(messages.count * loops.count, ordering: .relaxed)
        for server in loops {
            server.loop.execute { [self] in
                server.core.value.receiveFromCluster(messages)
                if inboxDepth.subtract(messages.count, ordering: .relaxed).newValue <= inboxHighWater / 4 {
                    inboxDrained.broadcast()
                }
            }
        }
        inboxDrained.lock()
        while inboxDepth.load(ordering: .relaxed) > inboxHighWater && !stopping.load(ordering: .relaxed) {
            _ = inboxDrained.wait(until: Date().addingTimeInterval(0.1))
        }
        inboxDrained.unlock()
    }

    // MARK: Leases

    /// The lease's name for a runner's run.
    static func leaseName(of runner: String) -> String { "run:" + runner }

    /// A run began on this node: lease it (off the loop) and keep it renewed.
    func ownRun(of runner: String, log: ServerLog) {
        owned.withLock { _ = $0.insert(runner) }
        takeovers.async { [self] in
            do {
                if try !lease.take(Self.leaseName(of: runner), ttl: settings.leaseSeconds),
                   let holder = try lease.holder(of: Self.leaseName(of: runner)), holder.node != settings.node {
                    log.write("cluster: run of \(runner) starts here while node \(holder.node) holds its lease")
                }
            } catch {
                log.write("cluster: cannot lease the run of \(runner): \(error)")
            }
        }
    }

    /// A run ended on this node: its lease goes once the end is committed (renewed until then), so no other
    /// node that takes the lease can find the run still live in the store and end or resume it a second time.
    func releaseRun(of runner: String, log: ServerLog) {
        let store = orphanage.withLock { $0?.store }
        releases.async { [self] in
            do {
                try store?.flushCommitted()
            } catch {
                log.write("cluster: the end of \(runner)'s run was not committed (\(error)); its lease runs out")
            }
            owned.withLock { _ = $0.remove(runner) }
            do { _ = try lease.release(Self.leaseName(of: runner)) } catch {
                log.write("cluster: cannot release the lease of \(runner): \(error)")
            }
        }
    }

    /// Lease releases, each after its run's end is committed (off the loops, apart from claims and takeovers).
    private let releases = DispatchQueue(label: "moonrunner.cluster.release")

    /// Marks a run taken over (its lease is held already) as this node's.
    func adoptedRun(of runner: String) {
        owned.withLock { _ = $0.insert(runner) }
    }

    private func renewLeases(log: ServerLog) {
        let interval = settings.leaseSeconds / 3
        var renewals = 0
        while !stopping.load(ordering: .relaxed) {
            if renewerDone.wait(timeout: .now() + interval) == .success { return }
            renewals += 1
            // Once a lease's length, on a queue of its own: a sweep reads the store and asks Redis about every
            // run, and must never hold up this node's own renewals. One sweep at a time.
            if renewals % 3 == 0, !isSweeping.exchange(true, ordering: .relaxed) {
                sweeps.async { [self] in
                    let before = unleasedRuns.withLock { $0 }
                    let after = sweepOrphans(seenUnleased: before, log: log)
                    unleasedRuns.withLock { $0 = after }
                    isSweeping.store(false, ordering: .relaxed)
                }
            }
            for runner in owned.withLock({ $0 }) {
                do {
                    if try !lease.renew(Self.leaseName(of: runner), ttl: settings.leaseSeconds) {
                        // Lost (paused longer than the TTL, or taken): take it back if it is free.
                        if try !lease.take(Self.leaseName(of: runner), ttl: settings.leaseSeconds) {
                            log.write("cluster: the lease of \(runner)'s run is another node's now")
                        }
                    }
                } catch {
                    log.write("cluster: cannot renew the lease of \(runner): \(error)")
                }
            }
        }
    }

    /// The sweeps' queue, whether one runs, and the runs they saw unleased (with since when).
    private let sweeps = DispatchQueue(label: "moonrunner.cluster.sweep")
    private let isSweeping = Atomic<Bool>(false)
    private let unleasedRuns = Mutex<[String: Date]>([:])

    /// Runs no node measures any more: live in the store, their lease held by nobody (its node died) at every
    /// sweep for the resume window, so their runners did not come back to any node (one that did would have
    /// taken the run over, and its lease). One survivor takes the lease (`SET NX`: exactly one wins) and ends
    /// the run on the loop that owns its runner, saved as timed out, as one server ends a run whose runner
    /// stayed away. A run just started is leased within milliseconds, so it is never mistaken for one.
    /// Returns the runs seen unleased, with when they were first seen so.
    private func sweepOrphans(seenUnleased before: [String: Date], log: ServerLog) -> [String: Date] {
        guard let (store, owner, resumeWindow) = orphanage.withLock({ $0 }) else { return [:] }
        var unleased: [String: Date] = [:]
        do {
            let mine = owned.withLock { $0 }
            for record in try store.liveRuns() where !mine.contains(record.runner) {
                let name = Self.leaseName(of: record.runner)
                guard try lease.holder(of: name) == nil else { continue }
                let since = before[record.runner] ?? Date()
                unleased[record.runner] = since
                guard Date().timeIntervalSince(since) >= max(resumeWindow, settings.leaseSeconds),
                      try lease.take(name, ttl: settings.leaseSeconds) else { continue }
                unleased[record.runner] = nil
                // Still live now that the lease is ours? (Its end, or another node's, may have been committed
                // since the list was read: a lease is given up only after the end is on disk.)
                guard try store.liveRuns().contains(where: { $0.id == record.id }) else {
                    _ = try? lease.release(name)
                    continue
                }
                guard let runner = try store.runner(named: record.runner) else {
                    _ = try? lease.release(name)
                    continue
                }
                let fixes = try store.fixesInTimeOrder(ofRun: record.id)
                owned.withLock { _ = $0.insert(record.runner) }
                log.write("cluster: run \(record.id) of \(record.runner) has had no node for \(Int(resumeWindow)) s: ending it here")
                let loops = servers.withLock { $0 }
                let server = loops[min(loops.count - 1, owner(record.runner))]
                server.loop.execute { server.core.value.endAbandoned(record, runner: runner, fixes: fixes) }
            }
        } catch {
            log.write("cluster: cannot look for runs without a node: \(error)")
        }
        return unleased
    }

    /// Stops renewing, gives up the leases this node holds (its runs were ended and saved), flushes the bus.
    func close() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        renewerDone.signal()
        inboxDrained.broadcast()
        takeovers.sync {}
        sweeps.sync {}
        releases.sync {}
        for runner in owned.withLock({ $0 }) { _ = try? lease.release(Self.leaseName(of: runner)) }
        bus.close(flushTimeout: 2)
        lease.close()
    }
}
