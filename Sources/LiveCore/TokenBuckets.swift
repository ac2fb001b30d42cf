/// Token buckets by key (a connection, an address, a runner): each holds up to `burst` tokens and gains `rate`
/// a second; taking one fails when it is empty. Bounded: past `capacity` keys the full buckets (which say
/// nothing a new bucket would not) are forgotten, and if that is not enough the oldest half goes. Loop thread
/// only (a value owned by the hub).
struct TokenBuckets {
    /// Tokens gained per second.
    let rate: Double
    /// Most tokens a bucket holds (how many may come at once).
    let burst: Double
    /// Most keys remembered.
    let capacity: Int
    private var buckets: [String: (tokens: Double, at: Double)] = [:]

    init(rate: Double, burst: Double, capacity: Int = 10_000) {
        self.rate = rate
        self.burst = max(1, burst)
        self.capacity = capacity
    }

    /// True when `key` has a token now (nothing taken).
    func hasToken(_ key: String, now: Double) -> Bool {
        tokens(of: key, now: now) >= 1
    }

    /// Takes one of `key`'s tokens; false (nothing taken) when it has none.
    @discardableResult
    mutating func take(_ key: String, now: Double) -> Bool {
        let available = tokens(of: key, now: now)
        guard available >= 1 else { return false }
        if buckets[key] == nil, buckets.count >= capacity { makeRoom(now: now) }
        buckets[key] = (available - 1, now)
        return true
    }

    /// Seconds until `key` has a token again (0 when it has one).
    func wait(for key: String, now: Double) -> Double {
        max(0, (1 - tokens(of: key, now: now)) / rate)
    }

    /// Keys remembered.
    var count: Int { buckets.count }

    private func tokens(of key: String, now: Double) -> Double {
        guard let bucket = buckets[key] else { return burst }
        return min(burst, bucket.tokens + max(0, now - bucket.at) * rate)
    }

    private mutating func makeRoom(now: Double) {
        buckets = buckets.filter { $0.value.tokens + max(0, now - $0.value.at) * rate < burst }
        if buckets.count >= capacity {
            let oldest = buckets.sorted { $0.value.at < $1.value.at }.prefix(buckets.count / 2).map(\.key)
            for key in oldest { buckets[key] = nil }
        }
    }
}
