import ToolSupport
import Foundation
import Locking
import PostgresRunStore
import RunCore
import RunStore

let storeBenchHelp = """
usage: moonrunner-bench store [--fixes N] [--runs N] [--batch-size N] [--phone-fixes] [--keep] [--db postgres://USER@HOST:PORT/DB]

Writes N fixes (default 1000000), spread over --runs concurrent runs (default 100), through submit() into a
fresh SQLite file (WAL, synchronous=NORMAL, default batching) in a temporary directory, then reports fixes
committed per second (from the first submit until flush() returns), the submit rate, and the size on disk
per 1000 fixes. --batch-size overrides the store's maximum batch size (default 65536). Build with -c release
for meaningful figures. --keep leaves the database file in place. --phone-fixes makes the fixes look like
what the server stores: coordinates with 7 decimals and whole-second timestamps as a phone sends them, a
receive clock with sub-microsecond digits (by default they are computed doubles, 17 digits each). --db writes
into that PostgreSQL database instead (it should be empty: the run ids are new, the runner "bench" is shared;
no size is reported).
"""

/// `moonrunner-bench store …` (`arguments` are the words after `store`).
func runStoreBenchmark(arguments: [String]) -> Int32 {
    let fixCount: Int
    let runCount: Int
    let keep: Bool
    let postgres: String?
    let phoneFixes: Bool
    var configuration = StoreConfiguration()
    do {
        var options = try Options(arguments, switches: ["keep", "phone-fixes"])
        if options.wantsHelp {
            print(storeBenchHelp)
            return 0
        }
        fixCount = try options.number("fixes", default: 1_000_000)
        runCount = try options.number("runs", default: 100)
        configuration.maximumBatchSize = try options.number("batch-size", default: configuration.maximumBatchSize)
        keep = options.flag("keep")
        postgres = options.string("db")
        phoneFixes = options.flag("phone-fixes")
        try options.finish()
        guard fixCount > 0, runCount > 0, configuration.maximumBatchSize > 0 else {
            throw Options.UsageError(description: "--fixes, --runs and --batch-size must be positive")
        }
    } catch {
        printError("moonrunner-bench store: \(error)\n\n\(storeBenchHelp)")
        return 2
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moonrunner-bench-\(UUID().uuidString)")
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    } catch {
        printError("moonrunner-bench store: cannot create \(directory.path): \(error)")
        return 1
    }
    defer { if !keep { try? FileManager.default.removeItem(at: directory) } }
    let path = directory.appendingPathComponent("bench.sqlite").path
    let store: any RunStore
    do {
        store = try postgres.map { url throws(StoreError) in try PostgresRunStore(url: url, configuration: configuration) }
            ?? SQLiteRunStore(path: path, configuration: configuration)
    } catch {
        printError("moonrunner-bench store: \(error)")
        return 1
    }
    let counter = Locked(BenchCounter())
    store.setCommitHandler { receipt in counter.withLock { $0.add(receipt) } }

    let start = Date().timeIntervalSince1970
    store.submit(.runner(name: "bench", keyHash: RunnerKey.hash("bench"), created: start))
    let runIDs: [Int64]
    do {
        runIDs = try (0..<runCount).map { _ throws(StoreError) in try store.allocateRunID() }
    } catch {
        printError("moonrunner-bench store: \(error)")
        return 1
    }
    for id in runIDs { store.submit(.runStarted(id: id, runner: "bench", started: start)) }

    let clockStart = DispatchTime.now().uptimeNanoseconds
    for index in 0..<fixCount {
        let run = index % runCount
        let sequence = Int64(index / runCount + 1)
        var t = start + Double(sequence)
        var fix = Fix(latitude: 51.5 + Double(sequence) * 1e-5 + Double(run) * 1e-3, longitude: -0.12 + Double(sequence) * 1e-5,
                      accuracy: 4 + Double(index % 7), timestamp: t)
        var received = t + 0.2
        if phoneFixes {
            // As parsed from a phone's `loc:` text (7 decimals, whole seconds) and stamped by a real clock.
            t = start.rounded(.down) + Double(sequence)
            fix = Fix(latitude: (fix.latitude * 1e7).rounded() / 1e7, longitude: (fix.longitude * 1e7).rounded() / 1e7,
                      accuracy: fix.accuracy, timestamp: t)
            received = t + 0.2 + Double(index % 997) * 1.37e-7
        }
        let stored = StoredFix(runID: runIDs[run], sequence: sequence, fix: fix, received: received,
                               rejection: index % 50 == 0 ? .inaccurate : nil)
        store.submit(.fix(stored, acknowledgement: String(sequence)))
    }
    let submitted = DispatchTime.now().uptimeNanoseconds
    store.flush()
    let flushed = DispatchTime.now().uptimeNanoseconds
    let walBytes = fileSize(path + "-wal")
    store.close()
    let fileBytes = fileSize(path)

    let submitSeconds = Double(submitted - clockStart) / 1e9
    let totalSeconds = Double(flushed - clockStart) / 1e9
    let kind = postgres.map { "PostgreSQL \(PostgresLocation.redacted($0))" } ?? "WAL, synchronous=NORMAL"
    print("store benchmark: \(fixCount) fixes over \(runCount) runs, \(kind), batches of at most \(configuration.maximumBatchSize)")
    print(String(format: "  submit():          %.3f s  (%.0f fixes/s; the caller never waits for the disk)",
                 submitSeconds, Double(fixCount) / submitSeconds))
    print(String(format: "  committed (flush): %.3f s  (%.0f fixes/s)", totalSeconds, Double(fixCount) / totalSeconds))
    let receipts = counter.withLock { $0 }
    print("  commits:           \(receipts.commits) (\(receipts.failures) failed), acknowledgements reported: \(receipts.acknowledgements)")
    if postgres == nil {
        print(String(format: "  size on disk:      %.1f MB after close (%.0f bytes per 1000 fixes); WAL before close %.1f MB",
                     Double(fileBytes) / 1e6, Double(fileBytes) / Double(fixCount) * 1000, Double(walBytes) / 1e6))
    }
    print("  target 200000 fixes/s: \(Double(fixCount) / totalSeconds >= 200_000 ? "met" : "NOT met")")
    if keep { print("  database kept at \(path)") }
    return receipts.failures == 0 ? 0 : 1
}

/// Counts what the commit handler sees, from the writer thread.
private struct BenchCounter {
    private(set) var commits = 0
    private(set) var failures = 0
    private(set) var acknowledgements = 0

    mutating func add(_ receipt: CommitReceipt) {
        commits += 1
        if receipt.failure != nil { failures += 1 }
        acknowledgements += receipt.acknowledgements.count
    }
}

private func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
}
