/// The Lua script entries are published with (`EVALSHA`, loaded with `SCRIPT LOAD` on each new publisher
/// connection), a run of up to ``entriesPerCall`` stream entries per call, each entry packing the events of one
/// batch for one stream (``PackedEntry``). A script rather than bare `XADD`s for four reasons:
///
/// - **Exactly once across reconnects.** Each bus instance numbers its stream entries; the script adds an entry
///   only if its number is above the instance's counter key, then moves the counter. A pipeline cut by a broken
///   connection is resent whole after reconnecting (the same entries, packed the same way): the entries Redis
///   had already added are skipped, so readers see each event once. (A Redis restarted without persistence has
///   lost the counter with the entries: what a reader had already read of the lost entries may then come
///   again, with new ids.)
/// - **An id for every event.** An entry of n events gets an id `MS-SEQ` chosen here (Redis's clock, past the
///   stream's newest entry) with the n sequence numbers `SEQ-n+1 … SEQ` free below it and below 1,000: the
///   reader gives the events those ids (``StreamID``), so each event has an id of its own, growing within the
///   stream, the same on every node, as when each event was an entry — and `MS × 1000 + SEQ` (the server's
///   SSE ids) never runs into the next millisecond.
/// - **One id in two streams.** With `alsoTo`, the id is reserved past the newest entry of both streams and
///   the entry added to each under it. An id a stream refuses (someone else wrote it since the script read
///   it) is reserved again once; only if the entry's own stream still refuses it does the entry get an id
///   Redis picks there (`*`, which gives a packed entry's events fewer numbers than they need: the reader
///   keeps them in order).
/// - **Cost.** A script call costs Redis far more than the `XADD`s in it: one call per run of entries, and
///   many events per entry, rather than a call or an entry per event.
///
/// KEYS: 1 the instance's counter, 2… the streams the entries name. ARGV: 1 `MAXLEN ~` of a stream, 2 of an
/// also-to stream, 3 `PEXPIRE` of the streams in ms (0: none), 4 the counter's lifetime in ms, 5 the number of
/// entries; then per entry: its number, the KEYS index of its stream, of its also-to stream (0: none), the
/// number of events it packs, the count of field and value words, those words. Returns one element per entry:
/// 1 added, 0 added before, or the error Redis gave (`XADD` on a key of another type, out of memory): the
/// others still go in. (An entry its own stream refuses may be in the also-to stream already: scripts do not
/// roll back.)
enum PublishScript {
    static let source = """
        local last = tonumber(redis.call('GET', KEYS[1]) or '0')
        local results, touched, newest, top = {}, {}, {}, nil
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        local function newestOf(k)
          local at = newest[k]
          if at == nil then
            at = {0, -1}
            local r = redis.pcall('XREVRANGE', KEYS[k], '+', '-', 'COUNT', 1)
            if type(r) == 'table' and r[1] then
              local ms, seq = string.match(r[1][1], '^(%d+)-(%d+)$')
              at = {tonumber(ms), tonumber(seq)}
            end
            newest[k] = at
          end
          return at
        end
        local function reserve(keys, n)
          local ms, first = now, 0
          for _, k in ipairs(keys) do
            local at = newestOf(k)
            if ms < at[1] or (ms == at[1] and first <= at[2]) then ms, first = at[1], at[2] + 1 end
          end
          if first + n > 1000 then ms, first = ms + 1, 0 end
          for _, k in ipairs(keys) do newest[k] = {ms, first + n - 1} end
          return string.format('%d-%d', ms, first + n - 1)
        end
        local function add(k, length, id, first, final)
          return redis.pcall('XADD', KEYS[k], 'MAXLEN', '~', length, id, unpack(ARGV, first, final))
        end
        local function refused(r) return type(r) == 'table' and r.err ~= nil end
        local i = 6
        for e = 1, tonumber(ARGV[5]) do
          local seq, s, a, n, w = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
          local first, final = i + 5, i + 4 + w
          if seq <= last then
            results[e] = 0
          else
            local keys = {s}
            if a > 0 then keys = {a, s} end
            local id = reserve(keys, n)
            local r = add(keys[1], ARGV[a > 0 and 2 or 1], id, first, final)
            if refused(r) then
              -- An id Redis did not take (someone else wrote the stream since it was read): read it again.
              for _, k in ipairs(keys) do newest[k] = nil end
              id = reserve(keys, n)
              r = add(keys[1], ARGV[a > 0 and 2 or 1], id, first, final)
            end
            if a > 0 and not refused(r) then
              touched[a] = true
              r = add(s, ARGV[1], id, first, final)
              if refused(r) then
                newest[s] = nil
                r = add(s, ARGV[1], '*', first, final)
              end
            end
            if refused(r) then results[e] = r else results[e] = 1; touched[s] = true end
            top = ARGV[i]
          end
          i = final + 1
        end
        if ARGV[3] ~= '0' then
          for k in pairs(touched) do redis.call('PEXPIRE', KEYS[k], ARGV[3]) end
        end
        if top then redis.call('SET', KEYS[1], top, 'PX', ARGV[4]) end
        return results
        """

    /// Stream entries per script call: a call blocks Redis while it runs, so a long batch is cut into several
    /// calls (still one pipeline, one round trip).
    static let entriesPerCall = 64

    /// The most events one stream entry packs: their sequence numbers must fit below 1,000 in a millisecond.
    static let eventsPerEntry = 500

    /// The field of an entry that packs several events: their fields, written as ``EventPack`` writes them (an
    /// entry of one event has its fields as they are, as entries of the bus before packing). The bus's own, as
    /// the node field is.
    static let packField = "_p"

    /// How long an instance's counter outlives its last entry: far longer than any resend takes.
    static let counterLifetimeMilliseconds = 3_600_000

    /// The `EVALSHA` arguments for a run of entries (at most ``entriesPerCall``).
    static func arguments(sha: [UInt8], entries: ArraySlice<PackedEntry>, counterKey: [UInt8], nodeField: [UInt8],
                          node: [UInt8], configuration: ClusterBusConfiguration) -> [[UInt8]] {
        var keys: [[UInt8]] = [counterKey]
        var keyIndex: [String: Int] = [:]
        func index(of stream: String) -> Int {
            if let known = keyIndex[stream] { return known }
            keys.append(Array(stream.utf8))
            keyIndex[stream] = keys.count
            return keys.count
        }
        var perEntry: [[UInt8]] = []
        perEntry.reserveCapacity(entries.count * 9)
        for entry in entries {
            let stream = index(of: entry.stream)
            let alsoTo = entry.alsoTo.map(index(of:)) ?? 0
            var words = [nodeField, node]
            if entry.events.count > 1 {
                var pack: [UInt8] = []
                pack.reserveCapacity(entry.events.reduce(0) { $0 + $1.fields.reduce(2) { $0 + 5 + $1.0.utf8.count + $1.1.count } })
                for event in entry.events { EventPack.append(event.fields, to: &pack) }
                words += [Array(packField.utf8), pack]
            } else {
                for event in entry.events {
                    for (name, value) in event.fields { words += [Array(name.utf8), value] }
                }
            }
            perEntry += [String(entry.number), String(stream), String(alsoTo), String(entry.events.count), String(words.count)]
                .map { Array($0.utf8) }
            perEntry += words
        }
        let expiry = configuration.streamExpiry.map { max(1, Int($0 * 1000)) } ?? 0
        let head = ["EVALSHA"].map { Array($0.utf8) } + [sha, Array(String(keys.count).utf8)]
        let settings = [String(configuration.streamLength), String(configuration.alsoToStreamLength), String(expiry),
                        String(counterLifetimeMilliseconds), String(entries.count)].map { Array($0.utf8) }
        return head + keys + settings + perEntry
    }
}

/// One stream entry as it goes into Redis: the events of one batch for one stream (and its also-to stream), in
/// the order they were queued, numbered for the script's exactly-once counter.
struct PackedEntry: Sendable {
    let stream: String
    let alsoTo: String?
    let number: UInt64
    let events: ArraySlice<OutgoingEntry>

    /// A batch of queued events (in queue order, numbered from `entries.first.sequence` on) packed into stream
    /// entries: each stream's events in the order they were queued, cut where the also-to stream changes (an
    /// entry goes whole to both streams or to its own only) and at ``PublishScript/eventsPerEntry``; the
    /// streams in the order of their first event. The entries are numbered from the batch's first sequence on,
    /// so they stay below the next batch's, and a batch packed again packs the same way.
    static func pack(_ entries: [OutgoingEntry]) -> [PackedEntry] {
        guard let first = entries.first else { return [] }
        var order: [String] = []
        var byStream: [String: [OutgoingEntry]] = [:]
        for entry in entries {
            if byStream[entry.stream] == nil { order.append(entry.stream) }
            byStream[entry.stream, default: []].append(entry)
        }
        var packed: [PackedEntry] = []
        packed.reserveCapacity(order.count)
        for stream in order {
            let events = byStream[stream] ?? []
            var start = 0
            while start < events.count {
                var end = start + 1
                while end < events.count && end - start < PublishScript.eventsPerEntry
                    && events[end].alsoTo == events[start].alsoTo { end += 1 }
                packed.append(PackedEntry(stream: stream, alsoTo: events[start].alsoTo,
                                          number: first.sequence + UInt64(packed.count), events: events[start..<end]))
                start = end
            }
        }
        return packed
    }
}

/// One entry in the publish queue, numbered in the order it was queued.
struct OutgoingEntry: Sendable {
    let stream: String
    let alsoTo: String?
    let fields: [(String, [UInt8])]
    let sequence: UInt64
}
