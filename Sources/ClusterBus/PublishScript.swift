/// The Lua script every entry is published with (`EVALSHA`, loaded with `SCRIPT LOAD` on each new publisher
/// connection). A script rather than a bare `XADD` for two reasons:
///
/// - **Exactly once across reconnects.** Each bus instance numbers its entries; the script adds an entry only
///   if its number is above the instance's counter key (then moves the counter). A pipeline cut by a broken
///   connection is resent whole after reconnecting: the entries Redis had already added are skipped (nil
///   reply), so readers see each entry once. (A Redis restarted without persistence has lost the counter
///   with the entries: what a reader had already read of the lost entries may then come again, with new ids.)
/// - **One id in two streams.** With `alsoTo`, the entry is added to that stream first (getting a fresh id),
///   then to its own stream under that same id: ids in the all-runners stream grow, so a runner's stream,
///   which holds a subset of them, does too. Only if that fails (someone removed the all-runners stream and
///   the clock went back) does the runner's stream get an id of its own.
///
/// KEYS: 1 the stream, 2 the instance's counter, 3 (optional) the also-to stream.
/// ARGV: 1 the entry's number, 2 `MAXLEN ~` of the stream, 3 of the also-to stream, 4 `PEXPIRE` of the
/// streams in ms (0: none), 5 the counter's lifetime in ms, 6… field, value, field, value…
/// Returns the entry's id, or nil when it was added before.
enum PublishScript {
    static let source = """
        local seq = tonumber(ARGV[1])
        local last = tonumber(redis.call('GET', KEYS[2]) or '0')
        if seq <= last then return false end
        local id
        if #KEYS == 3 then
          id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', unpack(ARGV, 6))
          local same = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], id, unpack(ARGV, 6))
          if type(same) == 'table' and same.err then
            redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, 6))
          end
        else
          id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, 6))
        end
        if ARGV[4] ~= '0' then
          redis.call('PEXPIRE', KEYS[1], ARGV[4])
          if #KEYS == 3 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
        end
        redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[5])
        return id
        """

    /// How long an instance's counter outlives its last entry: far longer than any resend takes.
    static let counterLifetimeMilliseconds = 3_600_000

    /// The `EVALSHA` arguments for one entry.
    static func arguments(sha: [UInt8], entry: OutgoingEntry, counterKey: [UInt8], nodeField: [UInt8], node: [UInt8],
                          configuration: ClusterBusConfiguration) -> [[UInt8]] {
        var arguments: [[UInt8]] = [Array("EVALSHA".utf8), sha]
        let stream = Array(entry.stream.utf8)
        if let alsoTo = entry.alsoTo {
            arguments += [Array("3".utf8), stream, counterKey, Array(alsoTo.utf8)]
        } else {
            arguments += [Array("2".utf8), stream, counterKey]
        }
        let expiry = configuration.streamExpiry.map { max(1, Int($0 * 1000)) } ?? 0
        arguments += [String(entry.sequence), String(configuration.streamLength),
                      String(configuration.alsoToStreamLength), String(expiry),
                      String(counterLifetimeMilliseconds)].map { Array($0.utf8) }
        arguments.reserveCapacity(arguments.count + 2 + entry.fields.count * 2)
        arguments += [nodeField, node]
        for (name, value) in entry.fields {
            arguments.append(Array(name.utf8))
            arguments.append(value)
        }
        return arguments
    }
}

/// One entry in the publish queue, numbered in the order it was queued.
struct OutgoingEntry: Sendable {
    let stream: String
    let alsoTo: String?
    let fields: [(String, [UInt8])]
    let sequence: UInt64
}
