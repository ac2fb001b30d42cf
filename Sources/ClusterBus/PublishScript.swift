/// The Lua script entries are published with (`EVALSHA`, loaded with `SCRIPT LOAD` on each new publisher
/// connection), a run of up to ``entriesPerCall`` entries per call. A script rather than bare `XADD`s for three
/// reasons:
///
/// - **Exactly once across reconnects.** Each bus instance numbers its entries; the script adds an entry only
///   if its number is above the instance's counter key, then moves the counter. A pipeline cut by a broken
///   connection is resent whole after reconnecting: the entries Redis had already added are skipped, so
///   readers see each entry once. (A Redis restarted without persistence has lost the counter with the
///   entries: what a reader had already read of the lost entries may then come again, with new ids.)
/// - **One id in two streams.** With `alsoTo`, the entry is added to that stream first (getting a fresh id),
///   then to its own stream under that same id: ids in the all-runners stream grow, so a runner's stream,
///   which holds a subset of them, does too. Only if that fails (someone removed the all-runners stream and
///   the clock went back) does the runner's stream get an id of its own.
/// - **Cost.** A script call costs Redis far more than the `XADD`s in it: one call per run of entries rather
///   than per entry took Redis's time per entry from about 51 µs to 27 µs (`moonrunner-bench bus`).
///
/// KEYS: 1 the instance's counter, 2… the streams the entries name. ARGV: 1 `MAXLEN ~` of a stream, 2 of an
/// also-to stream, 3 `PEXPIRE` of the streams in ms (0: none), 4 the counter's lifetime in ms, 5 the number of
/// entries; then per entry: its number, the KEYS index of its stream, of its also-to stream (0: none), the
/// count of field and value words, those words. Returns one element per entry: 1 added, 0 added before, or
/// the error Redis gave (`XADD` on a key of another type, out of memory): the others still go in. (An entry
/// its own stream refuses may be in the also-to stream already: scripts do not roll back.)
enum PublishScript {
    static let source = """
        local last = tonumber(redis.call('GET', KEYS[1]) or '0')
        local results, touched, top = {}, {}, nil
        local i = 6
        for e = 1, tonumber(ARGV[5]) do
          local seq, s, a, n = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
          local first, final = i + 4, i + 3 + n
          if seq <= last then
            results[e] = 0
          else
            local r
            if a > 0 then
              r = redis.pcall('XADD', KEYS[a], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, first, final))
              if type(r) ~= 'table' then
                touched[a] = true
                local same = redis.pcall('XADD', KEYS[s], 'MAXLEN', '~', ARGV[1], r, unpack(ARGV, first, final))
                if type(same) == 'table' and same.err then
                  r = redis.pcall('XADD', KEYS[s], 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, first, final))
                end
              end
            else
              r = redis.pcall('XADD', KEYS[s], 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, first, final))
            end
            if type(r) == 'table' and r.err then results[e] = r else results[e] = 1; touched[s] = true end
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

    /// Entries per script call: a call blocks Redis while it runs, so a long batch is cut into several calls
    /// (still one pipeline, one round trip).
    static let entriesPerCall = 64

    /// How long an instance's counter outlives its last entry: far longer than any resend takes.
    static let counterLifetimeMilliseconds = 3_600_000

    /// The `EVALSHA` arguments for a run of entries (at most ``entriesPerCall``).
    static func arguments(sha: [UInt8], entries: ArraySlice<OutgoingEntry>, counterKey: [UInt8], nodeField: [UInt8],
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
        perEntry.reserveCapacity(entries.count * 8)
        for entry in entries {
            let stream = index(of: entry.stream)
            let alsoTo = entry.alsoTo.map(index(of:)) ?? 0
            perEntry += [String(entry.sequence), String(stream), String(alsoTo), String(2 + entry.fields.count * 2)]
                .map { Array($0.utf8) }
            perEntry += [nodeField, node]
            for (name, value) in entry.fields {
                perEntry.append(Array(name.utf8))
                perEntry.append(value)
            }
        }
        let expiry = configuration.streamExpiry.map { max(1, Int($0 * 1000)) } ?? 0
        let head = ["EVALSHA"].map { Array($0.utf8) } + [sha, Array(String(keys.count).utf8)]
        let settings = [String(configuration.streamLength), String(configuration.alsoToStreamLength), String(expiry),
                        String(counterLifetimeMilliseconds), String(entries.count)].map { Array($0.utf8) }
        return head + keys + settings + perEntry
    }
}

/// One entry in the publish queue, numbered in the order it was queued.
struct OutgoingEntry: Sendable {
    let stream: String
    let alsoTo: String?
    let fields: [(String, [UInt8])]
    let sequence: UInt64
}
