import Foundation
import Locking

/// The reader thread: `XREAD BLOCK` on the subscribed streams and this instance's wake stream, entries to
/// the callback.
extension ClusterBus {
    /// The subscriptions as the reader took them for one `XREAD`.
    private struct Snapshot {
        var streams: [(name: String, token: Int, position: StreamPosition)]
        let generation: Int
    }

    /// The reader thread's body: until close(), take the subscriptions, make sure of a connection, resolve
    /// new `.new` starts, read, deliver. A failed connection is replaced after a backoff; the positions
    /// survive it, so the new connection reads on after the last id delivered.
    func readLoop() {
        var backoff = ReconnectBackoff(initial: configuration.reconnectInitialDelay,
                                       maximum: configuration.reconnectMaximumDelay)
        var connection: RedisConnection?
        var everConnected = false
        let wakeKey = configuration.internalKeyPrefix + "wake:" + instance
        // Where the reader is in its wake stream: from its start on each new connection (it holds at most one
        // entry, so that costs one extra pass at most).
        var wakeCursor = StreamID.zero
        while let snapshot = nextSnapshot() {
            do throws(BusError) {
                if connection == nil {
                    let timeout = configuration.readBlockTimeout + configuration.commandTimeout
                    guard let redis = try connect(.reader, timeout: timeout) else { break }
                    connection = redis
                    wakeCursor = .zero
                    if everConnected {
                        reading.withLock { $0.counts.reconnects += 1 }
                    }
                    everConnected = true
                    onNotice(.connected(.reader, endpoint))
                }
                guard let redis = connection else { continue }
                let streams = try resolve(snapshot, on: redis)
                let reply = try redis.command(readCommand(streams, wakeKey: wakeKey, wakeCursor: wakeCursor))
                if case .error(let message) = reply {
                    throw BusError(.reply, "XREAD on \(endpoint): \(message)")
                }
                let read = try Self.parseRead(reply)
                if let wakes = read[wakeKey], let last = wakes.last { wakeCursor = last.id }
                deliver(read, streams: streams)
                backoff.reset()
            } catch {
                // An error reply leaves the connection fine (say a stream key holds a string: WRONGTYPE until
                // the server changes its subscriptions); anything else replaces it.
                if error.kind != .reply, connection != nil {
                    disconnect(.reader)
                    connection = nil
                }
                guard waitToRetry(.reader, after: error, backoff: &backoff, on: reading) else { break }
            }
        }
        if connection != nil { disconnect(.reader) }
    }

    /// Waits until there is something to read; nil once the bus is closing.
    private func nextSnapshot() -> Snapshot? {
        reading.withLock(stepping: { set, _ -> LockStep<Snapshot?> in
            guard !set.closing else { return .done(nil) }
            guard !set.streams.isEmpty else {
                // Nothing to read: every change so far is taken up (awaitSubscriptions waits for that).
                set.appliedGeneration = set.generation
                reading.broadcast()
                return .wait
            }
            return .done(Snapshot(streams: set.streams.map { ($0.key, $0.value.token, $0.value.position) }.sorted { $0.name < $1.name },
                                  generation: set.generation))
        })
    }

    /// The snapshot's streams with a concrete id each: a `.new` start becomes the id of the stream's last
    /// entry now (`XREVRANGE … COUNT 1`, pipelined; `0-0` for a stream that does not exist yet), written back
    /// so that it holds from now on. Then the snapshot's generation counts as taken up.
    private func resolve(_ snapshot: Snapshot, on redis: RedisConnection) throws(BusError) -> [(name: String, token: Int, after: StreamID)] {
        let unresolved = snapshot.streams.filter { $0.position == .new }
        var resolved: [String: StreamID] = [:]
        for stream in unresolved {
            try redis.append(["XREVRANGE", stream.name, "+", "-", "COUNT", "1"].map { Array($0.utf8) })
        }
        var failure: BusError?
        for stream in unresolved {
            let reply = try redis.reply()
            guard let entries = reply.elements else {
                failure = failure ?? BusError(.reply, "XREVRANGE \(stream.name) on \(endpoint): \(reply)")
                continue
            }
            guard let last = entries.first else {
                resolved[stream.name] = .zero
                continue
            }
            guard let text = last.elements?.first?.text, let id = StreamID(text) else {
                throw BusError(.unexpectedReply, "XREVRANGE \(stream.name) on \(endpoint) answered \(reply)")
            }
            resolved[stream.name] = id
        }
        if let failure { throw failure }
        reading.withLock { set in
            for stream in unresolved {
                guard let id = resolved[stream.name], set.streams[stream.name]?.token == stream.token else { continue }
                set.streams[stream.name]?.position = .after(id)
            }
            set.appliedGeneration = max(set.appliedGeneration, snapshot.generation)
        }
        reading.broadcast()
        return snapshot.streams.map { stream in
            switch stream.position {
            case .after(let id): (stream.name, stream.token, id)
            case .beginning: (stream.name, stream.token, StreamID.zero)
            case .new: (stream.name, stream.token, resolved[stream.name] ?? .zero)
            }
        }
    }

    /// `XREAD COUNT n BLOCK ms STREAMS s… wake id… cursor`.
    private func readCommand(_ streams: [(name: String, token: Int, after: StreamID)], wakeKey: String,
                             wakeCursor: StreamID) -> [[UInt8]] {
        let block = max(1, Int(configuration.readBlockTimeout * 1000))
        var words = ["XREAD", "COUNT", String(max(1, configuration.readCount)), "BLOCK", String(block), "STREAMS"]
        words += streams.map(\.name) + [wakeKey]
        words += streams.map(\.after.description) + [wakeCursor.description]
        return words.map { Array($0.utf8) }
    }

    /// One entry as `XREAD` gives it.
    struct ReadEntry {
        let id: StreamID
        let fields: [(String, [UInt8])]
    }

    /// An `XREAD` reply by stream (nil reply: nothing came within the block time).
    static func parseRead(_ reply: RedisValue) throws(BusError) -> [String: [ReadEntry]] {
        if case .null = reply { return [:] }
        guard let streams = reply.elements else { throw BusError(.unexpectedReply, "XREAD answered \(reply)") }
        var result: [String: [ReadEntry]] = [:]
        for stream in streams {
            guard let pair = stream.elements, pair.count == 2, let name = pair[0].text, let entries = pair[1].elements else {
                throw BusError(.unexpectedReply, "XREAD answered a stream as \(stream)")
            }
            result[name] = try entries.map { (entry) throws(BusError) -> ReadEntry in
                guard let parts = entry.elements, parts.count == 2, let text = parts[0].text, let id = StreamID(text) else {
                    throw BusError(.unexpectedReply, "XREAD answered an entry of \(name) as \(entry)")
                }
                let values = parts[1].elements ?? []
                var fields: [(String, [UInt8])] = []
                fields.reserveCapacity(values.count / 2)
                var index = 0
                while index + 1 < values.count {
                    guard case .string(let field) = values[index], case .string(let value) = values[index + 1] else {
                        throw BusError(.unexpectedReply, "XREAD answered fields of \(name) as \(values)")
                    }
                    fields.append((String(decoding: field, as: UTF8.self), value))
                    index += 2
                }
                return ReadEntry(id: id, fields: fields)
            }
        }
        return result
    }

    /// Moves the positions of the streams still subscribed (same token) past what was read, then gives the
    /// events that are not echoes to the callback, in one batch: an entry that packs several events
    /// (``PublishScript``) as one ``BusEntry`` each, under the ids its id reserved for them, leaving out those at
    /// or before where the stream was read from (a reader resuming after an event in the middle of an entry).
    private func deliver(_ read: [String: [ReadEntry]], streams: [(name: String, token: Int, after: StreamID)]) {
        guard !read.isEmpty else { return }
        let nodeField = configuration.nodeField, node = configuration.node
        // Under the lock only what the subscriptions need (loops change them): positions, and which streams
        // are still read. The entries are unpacked off it.
        var kept: [(name: String, after: StreamID, entries: [ReadEntry])] = []
        reading.withLock { set in
            for stream in streams {
                guard let entries = read[stream.name], let last = entries.last,
                      set.streams[stream.name]?.token == stream.token else { continue }
                set.streams[stream.name]?.position = .after(last.id)
                set.counts.receivedEntries += entries.count
                kept.append((stream.name, stream.after, entries))
            }
        }
        var batch: [BusEntry] = []
        var echoes = 0
        for stream in kept {
            for entry in stream.entries {
                let from = entry.fields.first { $0.0 == nodeField }.map { String(decoding: $0.1, as: UTF8.self) } ?? ""
                if from == node {
                    echoes += entry.fields.first { $0.0 == PublishScript.packField }.map { EventPack.count($0.1) ?? 0 } ?? 1
                    continue
                }
                for (id, fields) in Self.unpack(entry, droppingField: nodeField) where id > stream.after {
                    batch.append(BusEntry(stream: stream.name, id: id, node: from, fields: fields))
                }
            }
        }
        reading.withLock { set in
            set.counts.echoesDropped += echoes
            set.counts.received += batch.count
        }
        if !batch.isEmpty { onEntries(batch) }
    }

    /// The events of one stream entry with their ids: the entry's own fields (less the node's) for an entry of
    /// one; for one that packs n (``PublishScript/packField``), the ids `MS-(SEQ-n+1) … MS-SEQ` of entry `MS-SEQ`.
    /// An entry whose pack does not decode gives none.
    static func unpack(_ entry: ReadEntry, droppingField nodeField: String) -> [(StreamID, [(String, [UInt8])])] {
        guard let pack = entry.fields.first(where: { $0.0 == PublishScript.packField })?.1 else {
            return [(entry.id, entry.fields.filter { $0.0 != nodeField })]
        }
        guard let events = EventPack.decode(pack), !events.isEmpty else { return [] }
        // An entry Redis numbered itself (the script's fallback) may have fewer numbers free below it.
        let count = UInt64(events.count)
        let first = entry.id.sequence >= count - 1 ? entry.id.sequence - (count - 1) : 0
        return events.enumerated().map { index, fields in
            (StreamID(milliseconds: entry.id.milliseconds, sequence: min(entry.id.sequence, first + UInt64(index))), fields)
        }
    }
}
