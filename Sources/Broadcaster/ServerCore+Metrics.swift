import LiveCore
import HTTP
import RunStore

extension ServerMetrics {
    /// Takes one store receipt: commit time and batch size, and a failure for the health check.
    func record(_ receipt: CommitReceipt, now: Double) {
        if let failure = receipt.failure {
            lastStoreFailure = (now, failure.message)
        } else {
            lastCommit = now
            commitSeconds.observe(receipt.duration)
            batchSizes.observe(Double(receipt.batchSize))
        }
    }

    /// Once a second: the store's writes waiting now.
    func noteWaitingWrites(_ count: Int, now: Double) {
        if count == 0 {
            writesWaitingSince = nil
        } else if writesWaitingSince == nil {
            writesWaitingSince = now
        }
    }

    /// Seconds the store has had writes waiting and committed none (0 while it commits or has none waiting).
    /// A write made after an idle hour waits a moment for its batch: counted from when it was first seen
    /// waiting, not from the last commit an hour ago.
    func storeStall(waiting count: Int, now: Double) -> Double {
        guard count > 0, let since = writesWaitingSince else { return 0 }
        return now - max(since, lastCommit)
    }
}

extension ServerCore {
    /// `GET /metrics`: Prometheus text exposition 0.0.4. Counters are `_total`, times in seconds.
    /// `counters`: `stats:`'s counters and ``loopGauges()``, summed over the loops. Histograms are this loop's.
    func metricsResponse(counters list: [(String, Int)]) -> HTTPResponse {
        var text = PrometheusText()
        let counters = Dictionary(list, uniquingKeysWith: { first, _ in first })
        func count(_ key: String) -> Double { Double(counters[key] ?? 0) }
        text.family("moonrunner_connections", "gauge", "Open line-protocol connections by role.", samples: [
            "moonrunner_connections{role=\"runner\"} \(counters["runners"] ?? 0)",
            "moonrunner_connections{role=\"spectator\"} \(counters["spectators"] ?? 0)",
            "moonrunner_connections{role=\"coach\"} \(counters["coaches"] ?? 0)",
            "moonrunner_connections{role=\"other\"} \(counters["other"] ?? 0)",
        ])
        for series in Self.countedSeries {
            guard let (name, type, help, key) = series else {
                text.family("moonrunner_fixes_filtered_total", "counter", "Fixes the filter refused, by reason.",
                            samples: counters.keys.filter { $0.hasPrefix("filtered_") }.sorted().map { key in
                                "moonrunner_fixes_filtered_total{reason=\"\(key.dropFirst("filtered_".count))\"} \(counters[key] ?? 0)"
                            })
                continue
            }
            text.single(name, type, help, count(key))
        }
        text.family("moonrunner_http_responses_total", "counter", "HTTP responses by status code.",
                    samples: metrics.responses.keys.sorted().map { code in
                        "moonrunner_http_responses_total{code=\"\(code)\"} \(metrics.responses[code] ?? 0)"
                    })
        text.family("moonrunner_store_commit_duration_seconds", "histogram",
                    "Time to commit one batch of writes to the store.",
                    samples: metrics.commitSeconds.exposition(name: "moonrunner_store_commit_duration_seconds"))
        text.family("moonrunner_store_batch_writes", "histogram", "Writes per committed batch.",
                    samples: metrics.batchSizes.exposition(name: "moonrunner_store_batch_writes"))
        text.family("moonrunner_loop_turn_duration_seconds", "histogram", "Work done in one event-loop turn.",
                    samples: metrics.turnSeconds.exposition(name: "moonrunner_loop_turn_duration_seconds"))
        var response = HTTPResponse.text(.ok, text.text)
        response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        return response
    }

    /// The series that are one counter of ``statisticsCounters()`` each, in the exposition's order: name, type,
    /// help, and the counter's key; nil stands where the filter's refusals by reason go.
    static let countedSeries: [(name: String, type: String, help: String, key: String)?] = [
        ("moonrunner_http_connections", "gauge", "Open HTTP connections, event streams included.", "http_connections"),
        ("moonrunner_event_streams", "gauge", "Open Server-Sent Events streams (web spectators).", "event_streams"),
        ("moonrunner_live_runs", "gauge", "Runs in progress.", "live_runs"),
        ("moonrunner_runs_started_total", "counter", "Runs started since the server started.", "runs_started"),
        ("moonrunner_fixes_accepted_total", "counter", "Fixes accepted into runs.", "fixes_accepted"),
        nil,
        ("moonrunner_fixes_resent_total", "counter", "Fixes skipped as already received (resends).", "fixes_resent"),
        ("moonrunner_events_sent_total", "counter", "Event lines queued to clients.", "events_sent"),
        ("moonrunner_events_conflated_total", "counter", "Pace events replaced by a newer one for a slow reader.", "events_conflated"),
        ("moonrunner_slow_clients_closed_total", "counter", "Clients closed for reading too slowly.", "slow_closed"),
        ("moonrunner_connections_accepted_total", "counter", "Line-protocol connections accepted.", "accepted_total"),
        ("moonrunner_connections_refused_total", "counter", "Connections refused as the server was full.", "refused_busy"),
        ("moonrunner_errors_sent_total", "counter", "err: replies sent.", "errors_sent"),
    ]

    /// `GET /healthz`: 200 while the loop answers (it is answering), the store committed its last batch, and
    /// writes waiting get committed: a database locked by another process fails no batch (the writer waits and
    /// retries), so writes waiting past ``ServerConfiguration/storeStallSeconds`` with no commit are 503 too.
    func healthResponse(now: Double) -> HTTPResponse {
        if let failure = metrics.lastStoreFailure, now - failure.at < 10 {
            return .text(.serviceUnavailable, "store failing: \(failure.message)\n")
        }
        let waiting = store.pendingWriteCount
        let stall = metrics.storeStall(waiting: waiting, now: now)
        if stall >= configuration.storeStallSeconds {
            return .text(.serviceUnavailable, "store stalled: nothing committed for \(Int(stall)) s, \(waiting) writes waiting\n")
        }
        return .text(.ok, "ok\n")
    }
}
