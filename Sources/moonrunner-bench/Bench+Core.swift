import ToolSupport
import Foundation
import RunCore

/// `moonrunner-bench core [fixes] [interval] [--course KM [--spacing M]]`: nanoseconds per fix of the whole
/// RunCore pipeline (filter, Kalman smoothing, geodesy, live metrics, splits and badges) on a synthetic noisy
/// run, 1,000,000 fixes by default, one a second. A shorter interval (say 0.001) replays the same fixes flat out,
/// as a backlog or a hostile client would send them. With `--course KM`, every accepted fix is also matched to a
/// course of KM km laid along the run's loop (a vertex every `--spacing` metres, default 20; a point every 5 km),
/// as a race server does for a runner on a course. Returns the process exit status.
func runCoreBenchmark(arguments: [String]) -> Int32 {
    let usage = "usage: moonrunner-bench core [FIXES [INTERVAL]] [--course KM [--spacing M]]   (default 1000000 fixes, 1 s apart)"
    if arguments.contains("--help") || arguments.contains("-h") {
        print(usage)
        return 0
    }
    var arguments = arguments
    var courseKilometres: Double?, spacing = 20.0
    for (option, apply) in [("--course", { courseKilometres = $0 }), ("--spacing", { spacing = $0 })] as [(String, (Double) -> Void)] {
        guard let index = arguments.firstIndex(of: option) else { continue }
        guard index + 1 < arguments.count, let value = Double(arguments[index + 1]), value > 0 else {
            printError("moonrunner-bench core: \(option) takes a positive number\n\n\(usage)")
            return 2
        }
        apply(value)
        arguments.removeSubrange(index...(index + 1))
    }
    let count = arguments.first.map { Int($0) ?? -1 } ?? 1_000_000
    let interval = arguments.dropFirst().first.map { Double($0) ?? -1 } ?? 1
    guard count > 0, interval > 0, interval.isFinite, arguments.count <= 2 else {
        printError("moonrunner-bench core: FIXES is a positive whole number and INTERVAL positive seconds\n\n\(usage)")
        return 2
    }
    let fixes = benchmarkFixes(count: count, interval: interval)
    var tracker = RunTracker()
    var accepted = 0, awards = 0, splits = 0
    var matcher: CourseMatcher?
    if let courseKilometres {
        do {
            matcher = CourseMatcher(course: try benchmarkCourse(kilometres: courseKilometres, spacing: spacing))
        } catch {
            printError("moonrunner-bench core: the course: \(error)")
            return 1
        }
    }
    let clock = ContinuousClock()
    let cpuStarted = threadCPUSeconds()
    let started = clock.now
    for fix in fixes {
        switch tracker.add(fix, now: fix.timestamp) {
        case .accepted(let progress):
            accepted += 1
            if matcher != nil { _ = matcher!.update(with: fix) }
            awards += progress.awards.count
            splits += progress.splits.count
        case .rejected, .held:
            break
        }
    }
    let elapsed = clock.now - started
    let cpuSeconds = threadCPUSeconds() - cpuStarted
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let distance = tracker.snapshot?.distance ?? 0
    print("fixes: \(count) (accepted \(accepted), awards \(awards), splits \(splits), distance \(Int(distance)) m)")
    if let matcher {
        print("course: \(Int(matcher.course.length)) m, \(matcher.course.coordinates.count) vertices; along \(Int(matcher.along)) m, "
            + "\(matcher.passages.count) of \(matcher.course.points.count) points passed")
    }
    print(String(format: "total: %.3f s", seconds))
    print(String(format: "per fix: %.0f ns (CPU time of this thread: %.0f ns, unaffected by other load)",
                 seconds * 1e9 / Double(count), cpuSeconds * 1e9 / Double(count)))
    return 0
}

/// CPU time consumed by the calling thread, seconds.
private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// The benchmark run's loop as a course of `kilometres`, laps of it with a vertex every `spacing` metres and a
/// point every 5 km.
private func benchmarkCourse(kilometres: Double, spacing: Double) throws(CourseError) -> Course {
    let radius = 2000 / (2 * Double.pi), metresPerDegree = 111_250.0
    let latitude = 51.5, longitude = -0.12
    let eastScale = metresPerDegree * cos(latitude * .pi / 180)
    func at(_ metres: Double) -> Coordinate {
        let angle = metres / radius
        return Coordinate(latitude: latitude + radius * (1 - cos(angle)) / metresPerDegree,
                          longitude: longitude + radius * sin(angle) / eastScale)
    }
    let length = kilometres * 1000
    let path = stride(from: 0, through: length, by: spacing).map(at)
    let points = stride(from: 5000.0, to: length, by: 5000).map { (name: "km \(Int($0 / 1000))", coordinate: at($0)) }
    return try Course(name: "bench", path: path, waypoints: points)
}

/// A reproducible noisy run at 3 m/s, one fix a second, around a 2 km loop (so it stays near its start
/// however long it is), with GPS error correlated from fix to fix (per-axis 4 m) and a spike now and then.
private func benchmarkFixes(count: Int, interval: Double) -> [Fix] {
    var random = SeededRandom(seed: 0x5EED)
    var error = CorrelatedGPSNoise(sigma: 4, correlation: 0.95, random: &random)
    let radius = 2000 / (2 * Double.pi), metresPerDegree = 111_250.0
    let latitude = 51.5, longitude = -0.12, start = 1_700_000_000.0
    let eastScale = metresPerDegree * cos(latitude * .pi / 180)
    var fixes: [Fix] = []
    fixes.reserveCapacity(count)
    for second in 0..<count {
        let angle = 3 * Double(second) / radius
        let (errorEast, errorNorth) = error.next(&random)
        let spike = second % 997 == 500 ? 150.0 : 0
        let east = radius * sin(angle) + errorEast + spike, north = radius * (1 - cos(angle)) + errorNorth
        fixes.append(Fix(latitude: latitude + north / metresPerDegree, longitude: longitude + east / eastScale,
                         accuracy: 6 * (0.9 + 0.2 * random.uniform()), timestamp: start + Double(second) * interval))
    }
    return fixes
}
