import ToolSupport
import Foundation
import RunCore
import RunStore

/// `moonrunner-bench import [FILE] [--repeat N]`: points per second of importing a GPX or TCX file
/// (tools/routes/marathon.gpx by default): reading it (XMLParser, the points in segments), and the whole
/// import (reading, the engine, and every fix, award and the run stored) into an SQLite file in a temporary
/// directory. The best of N rounds (default 5) is reported, in wall-clock time and in the process's CPU
/// time (which other load on the machine disturbs less). Returns the process exit status.
func runImportBenchmark(arguments: [String]) -> Int32 {
    let usage = "usage: moonrunner-bench import [FILE] [--repeat N]   (default tools/routes/marathon.gpx, 5 rounds)"
    if arguments.contains("--help") || arguments.contains("-h") {
        print(usage)
        return 0
    }
    let file: String
    let rounds: Int
    do {
        if let unknown = Options.firstUnknownOption(in: arguments, values: ["repeat"]) {
            throw Options.UsageError(description: "unknown option '\(unknown)'")
        }
        var options = try Options(arguments)
        rounds = try options.number("repeat", default: 5)
        try options.finish()
        guard rounds > 0, options.positional.count <= 1 else {
            throw Options.UsageError(description: usage)
        }
        file = options.positional.first ?? "tools/routes/marathon.gpx"
    } catch {
        printError("moonrunner-bench import: \(error)")
        return 2
    }
    do {
        let data = try FileAccess.read(file)
        let points = try ActivityFile.read(data).activities.reduce(0) { $0 + $1.pointCount }
        guard points > 0 else { throw StoreError.invalidInput("no track points") }
        let clock = ContinuousClock()
        var bestRead = Duration.seconds(1_000_000), bestImport = bestRead
        var cpuRead = Double.infinity, cpuImport = Double.infinity
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("moonrunner-bench-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for round in 0..<rounds {
            var cpu = processCPUSeconds()
            let read = clock.measure { _ = try? ActivityFile.read(data) }
            cpuRead = min(cpuRead, processCPUSeconds() - cpu)
            bestRead = min(bestRead, read)
            let store = try SQLiteRunStore(path: folder.appendingPathComponent("round-\(round).sqlite").path)
            var failure: StoreError?
            cpu = processCPUSeconds()
            let whole = clock.measure {
                do throws(StoreError) {
                    _ = try RunImport.importFile(data, runner: "bench", into: store, now: 0)
                } catch {
                    failure = error
                }
            }
            store.close()
            cpuImport = min(cpuImport, processCPUSeconds() - cpu)
            if let failure { throw failure }
            bestImport = min(bestImport, whole)
        }
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        }
        print("file: \(file) (\(data.count) bytes, \(points) points), best of \(rounds)")
        print(String(format: "read (XML to points):           %8.2f ms  %9.0f points/s   (CPU %.2f ms, %.0f points/s)",
                     seconds(bestRead) * 1000, Double(points) / seconds(bestRead), cpuRead * 1000,
                     Double(points) / cpuRead))
        print(String(format: "import (read, engine, SQLite):  %8.2f ms  %9.0f points/s   (CPU %.2f ms, %.0f points/s)",
                     seconds(bestImport) * 1000, Double(points) / seconds(bestImport), cpuImport * 1000,
                     Double(points) / cpuImport))
        return 0
    } catch {
        printError("moonrunner-bench import: \(error)")
        return 1
    }
}

/// CPU time of the whole process (the import's SQLite writer thread included), seconds.
private func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}
