/// What `GET /metrics` shows besides the `stats:` counters: HTTP responses by status and the histograms of
/// store commits and loop turns. Loop thread only (the commit handler hops to the loop first).
final class ServerMetrics {
    /// HTTP responses sent, by status code.
    var responses: [Int: Int] = [:]
    /// Seconds per store commit.
    var commitSeconds = Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
    /// Writes per committed batch.
    var batchSizes = Histogram(bounds: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536])
    /// Seconds of work per loop turn.
    var turnSeconds = Histogram(bounds: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1])
    /// The last store failure and when it happened (health turns bad while it is recent).
    var lastStoreFailure: (at: Double, message: String)?
    /// When a batch last committed (0: none yet).
    var lastCommit = 0.0
    /// Since when writes have been waiting without a moment with none (looked at once a second; nil while
    /// none wait). With ``lastCommit``, how long the store has held writes without committing any.
    var writesWaitingSince: Double?

    /// Counts one HTTP response.
    func countResponse(_ status: Int) {
        responses[status, default: 0] += 1
    }
}

/// A Prometheus histogram: cumulative buckets by upper bound, a sum and a count.
struct Histogram {
    let bounds: [Double]
    private(set) var counts: [Int]
    private(set) var sum = 0.0
    private(set) var count = 0

    init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count)
    }

    /// Records one observation.
    mutating func observe(_ value: Double) {
        sum += value
        count += 1
        // Buckets are cumulative in the exposition; here each observation counts in its first bucket only.
        if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
    }

    /// `name_bucket{le="…"}` lines, `+Inf`, `name_sum` and `name_count`.
    func exposition(name: String) -> [String] {
        var lines: [String] = []
        var running = 0
        for (bound, bucket) in zip(bounds, counts) {
            running += bucket
            lines.append("\(name)_bucket{le=\"\(PrometheusText.number(bound))\"} \(running)")
        }
        lines.append("\(name)_bucket{le=\"+Inf\"} \(count)")
        lines.append("\(name)_sum \(PrometheusText.number(sum))")
        lines.append("\(name)_count \(count)")
        return lines
    }
}

/// Prometheus text exposition format 0.0.4, by hand (it is a few lines of text).
struct PrometheusText {
    private(set) var lines: [String] = []

    /// A metric family with its HELP and TYPE, then its samples (`name{labels} value`).
    mutating func family(_ name: String, _ type: String, _ help: String, samples: [String]) {
        lines.append("# HELP \(name) \(help)")
        lines.append("# TYPE \(name) \(type)")
        lines += samples
    }

    /// One unlabelled sample.
    mutating func single(_ name: String, _ type: String, _ help: String, _ value: Double) {
        family(name, type, help, samples: ["\(name) \(Self.number(value))"])
    }

    /// The whole exposition.
    var text: String { lines.joined(separator: "\n") + "\n" }

    /// Whole numbers without a fraction, others as Swift prints them (Prometheus reads both).
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
