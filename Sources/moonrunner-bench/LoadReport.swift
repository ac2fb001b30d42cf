import Foundation

/// One scenario's figures as `key: value` lines and a one-line summary judged against the scenario's target.
struct LoadReport {
    /// The report lines in order.
    private(set) var lines: [(String, String)] = []
    /// One line: the load, the headline figures and whether the target was met.
    private(set) var summary = ""

    init(scenario: LoadScenario, result: LoadResult, shutdown: (seconds: Double, status: Int32)?,
         slowClientLogLines: Int) {
        let configuration = scenario.configuration
        let window = max(result.streamingSeconds, 1e-9)
        let fixesPerSecond = Double(result.fixesSentWhileStreaming) / window
        let eventsPerSecond = Double(result.paceReceivedWhileStreaming) / window
        let unacknowledged = result.fixesSent - result.fixesAcknowledged
        let paceMissing = result.paceExpected - result.paceReceived
        let latency = result.paceLatency
        let statistics = result.statistics

        add("scenario", scenario.name)
        add("runners", configuration.runners)
        add("spectators", configuration.spectators)
        if configuration.webSpectators > 0 { add("web_spectators", configuration.webSpectators) }
        add("idle_connections", configuration.idle)
        if configuration.runners > 0 {
            add("mode", configuration.flatOut ? "flat out, pipeline \(configuration.pipeline) unacked fixes per runner"
                : "\(Self.number(configuration.rate)) fix/s per runner")
            add("fix_timestamps", configuration.fixInterval.map { "phone clock, \(Self.number($0)) s apart" }
                ?? "wall clock at send")
            add("duration_s", Self.fixed(result.streamingSeconds, 2))
        }
        add("setup_s", Self.fixed(result.setupSeconds, 2))
        if configuration.devices > 0 {
            let perSecond = Double(result.devicePositionsAnswered) / window
            add("devices", "\(configuration.devices) (\(configuration.deviceKeepAlive ? "keep-alive" : "a connection per position"))")
            add("device_positions_answered", result.devicePositionsAnswered)
            add("device_positions_per_s", Self.fixed(perSecond, 0))
            add("device_answer_p50_ms", Self.milliseconds(result.deviceLatency.percentile(0.5)))
            add("device_answer_p99_ms", Self.milliseconds(result.deviceLatency.percentile(0.99)))
            if let seconds = result.serverCPUSeconds {
                add("device_positions_per_core_s", Self.fixed(Double(result.devicePositionsAnswered) / max(seconds, 1e-9), 0))
            }
        }
        let livePerSecond = configuration.devices > 0 ? Double(result.devicePositionsAnswered) / window : nil
        if let single = result.backlogSingle, let batch = result.backlogBatch {
            add("backlog_devices", "\(single.devices) per mode, a fresh device token each: queues of \(single.queueSize) "
                + "positions \(LoadBacklogDevice.interval) s apart, the oldest "
                + "\((single.queueSize - 1) * LoadBacklogDevice.interval) s old, the newest current")
            addBacklog("backlog_single", single)
            add("backlog_batch_request_bytes", batch.batchBodyBytes)
            addBacklog("backlog_batch", batch)
            add("backlog_vs_live_positions_per_s", "one per request \(Self.fixed(Self.storedPerSecond(single), 0)), "
                + "one batch \(Self.fixed(Self.storedPerSecond(batch), 0)), live single positions "
                + (livePerSecond.map { Self.fixed($0, 0) } ?? "not measured"))
        }
        if configuration.runners > 0 {
            add("fixes_sent", result.fixesSent)
            add("fixes_per_s", Self.fixed(fixesPerSecond, 0))
            add("pace_events_received", result.paceReceived)
            add("events_per_s", Self.fixed(eventsPerSecond, 0))
            add("latency_p50_ms", Self.milliseconds(latency.percentile(0.50)))
            add("latency_p90_ms", Self.milliseconds(latency.percentile(0.90)))
            add("latency_p99_ms", Self.milliseconds(latency.percentile(0.99)))
            add("latency_p999_ms", Self.milliseconds(latency.percentile(0.999)))
            add("latency_max_ms", Self.milliseconds(latency.maximum))
            add("latency_mean_ms", Self.fixed(latency.mean / 1000, 3))
            let steady = result.steadyPaceLatency
            add("steady_latency_p50_p99_max_ms", "\(Self.milliseconds(steady.percentile(0.5))) "
                + "\(Self.milliseconds(steady.percentile(0.99))) \(Self.milliseconds(steady.maximum)) "
                + "(fixes sent after the first second, \(steady.count) events)")
            add("ack_latency_p50_ms", Self.milliseconds(result.ackLatency.percentile(0.50)))
            add("ack_latency_p99_ms", Self.milliseconds(result.ackLatency.percentile(0.99)))
            add("fixes_acked", result.fixesAcknowledged)
            add("fixes_unacked", unacknowledged)
            add("pace_expected", result.paceExpected)
            add("pace_missing", paceMissing)
            add("runner_own_pace_missing", result.fixesSent - result.ownPaceReceived)
            add("pace_samples_fully_parsed", "\(result.checkedPaceSamples) (\(result.malformedPaceSamples) malformed)")
        }
        if let statistics {
            for name in ["fixes_accepted", "fixes_filtered", "events_sent", "events_conflated", "slow_closed",
                         "refused_busy", "errors_sent"] {
                if let value = statistics[name] { add("server_\(name)", value) }
            }
        } else {
            add("server_stats", "unavailable")
        }
        add("server_slow_client_log_lines", slowClientLogLines)
        add("errors_received", result.serverErrors + result.protocolErrors)
        if let first = result.firstServerError { add("first_error", first) }
        add("unexpected_closes", result.unexpectedCloses)
        if let first = result.firstCloseReason { add("first_close", first) }
        add("server_rss_start_mib", Self.mebibytes(result.residentBefore))
        if configuration.idle > 0 {
            add("idle_connections_ready", result.idleReady)
            add("server_rss_idle_mib", Self.mebibytes(result.residentAfterIdle))
        }
        add("server_rss_connected_mib", Self.mebibytes(result.residentConnected))
        add("server_rss_end_mib", Self.mebibytes(result.residentAfter))
        var bytesPerStream: Int?
        if configuration.webSpectators > 0, let before = result.residentBefore, let after = result.residentConnected {
            bytesPerStream = (after - before) / configuration.webSpectators
            add("server_bytes_per_event_stream", "\(bytesPerStream!) (runners' connections included)")
            add("web_other_events_expected", result.otherEventsExpected)
            add("web_other_events_received", result.otherEventsReceived)
        }
        var bytesPerLiveRun: Int?
        if configuration.fixesPerRunner != nil, configuration.runners > 0, let before = result.residentBefore,
           let after = result.residentAfter {
            add("server_bytes_per_live_run_at_end", "\((after - before) / configuration.runners) (its connection included)")
            if let settled = result.residentSettled {
                add("server_rss_settled_mib", "\(Self.mebibytes(settled)) (11 s later, the runs still live)")
                bytesPerLiveRun = (settled - before) / configuration.runners
                add("server_bytes_per_live_run_settled", "\(bytesPerLiveRun!) (its connection included)")
            }
        }
        var bytesPerIdle: Int?
        if configuration.idle > 0, let before = result.residentBefore, let after = result.residentAfterIdle {
            bytesPerIdle = (after - before) / configuration.idle
            add("server_bytes_per_idle_connection", bytesPerIdle!)
        }
        if let seconds = result.serverCPUSeconds {
            add("server_cpu_percent_of_one_core", Self.fixed(100 * seconds / window, 0))
        }
        if let seconds = result.benchCPUSeconds {
            add("bench_cpu_percent_of_one_core", Self.fixed(100 * seconds / window, 0))
        }
        if let load = result.machineLoadAverage { add("machine_load_average_1m", load) }
        if let shutdown {
            add("server_shutdown_s", Self.fixed(shutdown.seconds, 2))
            add("server_exit_status", shutdown.status)
        }

        var headline: String
        if configuration.devices > 0 {
            headline = "\(scenario.name): \(configuration.devices) devices "
                + "(\(configuration.deviceKeepAlive ? "keep-alive" : "new connection per position")): "
                + "\(Self.fixed(Double(result.devicePositionsAnswered) / window, 0)) positions/s answered after commit, "
                + "p50 \(Self.milliseconds(result.deviceLatency.percentile(0.5))) ms, "
                + "p99 \(Self.milliseconds(result.deviceLatency.percentile(0.99))) ms, \(result.serverErrors) errors"
        } else if configuration.runners == 0 && configuration.idle == 0 && configuration.backlogDevices > 0 {
            headline = "\(scenario.name): no live load"
        } else if configuration.runners > 0 {
            let mode = configuration.flatOut ? "flat out" : "\(Self.number(configuration.rate)) fix/s"
            headline = "\(scenario.name): \(configuration.runners) runners (\(mode)), \(configuration.spectators) spectators"
            if configuration.webSpectators > 0 { headline += ", \(configuration.webSpectators) web spectators" }
            if configuration.idle > 0 { headline += ", \(configuration.idle) idle" }
            headline += ": \(Self.fixed(fixesPerSecond, 0)) fixes/s, \(Self.fixed(eventsPerSecond, 0)) events/s, "
                + "p50 \(Self.milliseconds(latency.percentile(0.5))) ms, p99 \(Self.milliseconds(latency.percentile(0.99))) ms, "
                + "max \(Self.milliseconds(latency.maximum)) ms, lost \(paceMissing) events, \(unacknowledged) unacked"
        } else {
            headline = "\(scenario.name): \(result.idleReady) idle connections, server RSS "
                + "\(Self.mebibytes(result.residentBefore)) -> \(Self.mebibytes(result.residentAfterIdle)) MiB, "
                + "\(bytesPerIdle.map(String.init) ?? "?") bytes each"
        }
        if let single = result.backlogSingle, let batch = result.backlogBatch {
            headline += "; backlog \(single.devices) phone\(single.devices == 1 ? "" : "s") × \(single.queueSize) queued: "
                + "one per request \(Self.backlogHeadline(single)), one batch \(Self.backlogHeadline(batch))"
            if let livePerSecond { headline += ", against \(Self.fixed(livePerSecond, 0)) live positions/s" }
        }
        switch scenario.target {
        case .latencyAndNoLoss(let limit)?:
            let met = Double(latency.percentile(0.99)) / 1000 < limit && paceMissing == 0 && unacknowledged == 0
                && result.unexpectedCloses == 0 && latency.count > 0
            headline += " — target p99 < \(Self.number(limit)) ms and zero loss: \(met ? "MET" : "MISSED")"
        case .throughput(let wanted)?:
            headline += " — target >= \(Self.fixed(wanted, 0)) fixes/s: \(fixesPerSecond >= wanted ? "MET" : "MISSED")"
        case .memoryAtEnd(let limit)?:
            let met = (result.residentAfter ?? .max) < limit && unacknowledged == 0 && result.unexpectedCloses == 0
            headline += ", RSS at the end \(Self.mebibytes(result.residentAfter)) MiB, "
                + "settled \(Self.mebibytes(result.residentSettled)) MiB, "
                + "\(bytesPerLiveRun.map(String.init) ?? "?") bytes per live run"
                + " — target < \(limit >> 20) MiB: \(met ? "MET" : "MISSED")"
        case .memoryPerConnection(let limit)?:
            let met = (bytesPerIdle ?? Int.max) < limit && result.idleReady == configuration.idle
            headline += " — target < \(limit) bytes per connection: \(met ? "MET" : "MISSED")"
        case .web(let limit, let bytes)?:
            let lostOther = result.otherEventsExpected - result.otherEventsReceived
            headline += ", \(lostOther) run/split/badge/end events lost, \(bytesPerStream.map(String.init) ?? "?") bytes per stream"
            let met = Double(latency.percentile(0.99)) / 1000 < limit && lostOther == 0 && unacknowledged == 0
                && (bytesPerStream ?? .max) < bytes && result.unexpectedCloses == 0 && latency.count > 0
            headline += " — target p99 < \(Self.number(limit)) ms, no other event lost, < \(bytes) bytes per stream: "
                + (met ? "MET" : "MISSED")
        case nil:
            break
        }
        summary = headline
    }

    /// A backlog phase's lines, `PREFIX_…`.
    private mutating func addBacklog(_ prefix: String, _ figures: BacklogFigures) {
        add("\(prefix)_answers", figures.answers.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }
            .joined(separator: ", ") + (figures.finished ? "" : " (not finished within the time limit)"))
        add("\(prefix)_positions_sent", figures.positionsSent)
        add("\(prefix)_positions_answered_200", figures.positionsAnswered)
        if let stored = figures.positionsStored {
            let queued = figures.devices * figures.queueSize
            add("\(prefix)_positions_stored", "\(stored) of \(queued) (each run's GPX export)"
                + (stored < queued ? ": FEWER than queued" : ""))
        } else {
            add("\(prefix)_positions_stored", "unknown: \(figures.storeCheckProblem ?? "?")")
        }
        add("\(prefix)_positions_stored_per_s", Self.fixed(Self.storedPerSecond(figures), 0))
        add("\(prefix)_positions_stored_per_s_per_phone",
            Self.fixed(Self.storedPerSecond(figures) / Double(max(figures.devices, 1)), 0))
        add("\(prefix)_answer_p50_ms", Self.milliseconds(figures.latency.percentile(0.5)))
        add("\(prefix)_answer_p99_ms", Self.milliseconds(figures.latency.percentile(0.99)))
        add("\(prefix)_s", Self.fixed(figures.seconds, 2))
    }

    /// Positions on disk per second of the phase (0 when the count is unknown).
    private static func storedPerSecond(_ figures: BacklogFigures) -> Double {
        Double(figures.positionsStored ?? 0) / max(figures.seconds, 1e-9)
    }

    /// `N stored/s (p50 …, p99 … ms)`, and what went wrong, plainly.
    private static func backlogHeadline(_ figures: BacklogFigures) -> String {
        var text = "\(fixed(storedPerSecond(figures), 0)) positions/s stored (p50 "
            + "\(milliseconds(figures.latency.percentile(0.5))) ms, p99 \(milliseconds(figures.latency.percentile(0.99))) ms)"
        let failed = figures.answers.filter { !$0.key.hasPrefix("200") }
        if !failed.isEmpty {
            text += " ANSWERED " + failed.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
        }
        let queued = figures.devices * figures.queueSize
        if let stored = figures.positionsStored {
            if stored < queued { text += " STORED ONLY \(stored) of \(queued)" }
        } else {
            text += " stored count unknown"
        }
        return text
    }

    private mutating func add(_ key: String, _ value: some CustomStringConvertible) {
        lines.append((key, value.description))
    }

    private static func fixed(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static func milliseconds(_ micros: Int64) -> String {
        fixed(Double(micros) / 1000, 3)
    }

    private static func mebibytes(_ bytes: Int?) -> String {
        bytes.map { fixed(Double($0) / 1_048_576, 1) } ?? "unknown"
    }
}
