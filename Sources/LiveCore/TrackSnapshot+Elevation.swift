import RunCore
import RunStore
import Wire

extension TrackSnapshot {
    /// The most samples an elevation profile holds: more than a page's profile has pixels across.
    static let elevationSamples = 600

    /// `[[time, altitude], …]` for a run's elevation profile: seconds since `started` (1 decimal, the clock of the
    /// points' `time`) and the altitude in metres (1 decimal) as ``ElevationMeter`` smooths it, so that the
    /// drawing shows what the gain counts rather than the GPS's noise. At most ``elevationSamples``: a longer
    /// run's fixes are taken evenly. `[]` when no accepted fix had an altitude.
    static func elevation(_ fixes: [StoredFix], started: Double) -> [UInt8] {
        var meter = ElevationMeter()
        var samples: [(time: Double, altitude: Double)] = []
        for stored in fixes where stored.isAccepted {
            guard let altitude = stored.fix.altitude else { continue }
            meter.add(altitude: altitude, timestamp: stored.fix.timestamp)
            if let smoothed = meter.smoothed { samples.append((stored.fix.timestamp - started, smoothed)) }
        }
        var json: [UInt8] = [UInt8(ascii: "[")]
        // Every step-th sample and the last one: at most elevationSamples in all.
        let step = samples.count <= elevationSamples ? 1
            : (samples.count - 1 + elevationSamples - 2) / (elevationSamples - 1)
        var kept = Array(stride(from: 0, to: samples.count, by: step))
        // The profile ends where the run does.
        if let last = kept.last, last != samples.count - 1 { kept.append(samples.count - 1) }
        for index in kept {
            if json.count > 1 { json.append(UInt8(ascii: ",")) }
            json += Array(("[" + NumberFormat.string(samples[index].time, decimals: 1) + ","
                + NumberFormat.string(samples[index].altitude, decimals: 1) + "]").utf8)
        }
        json.append(UInt8(ascii: "]"))
        return json
    }
}
