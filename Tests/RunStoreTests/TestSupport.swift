import Foundation
import MoonRunnerTestSupport
import PostgresRunStore
import RunCore
@testable import RunStore

/// A fresh directory under the system temporary directory, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("RunStoreTests-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// A thread-safe list the commit handler appends receipts to.
final class ReceiptLog: @unchecked Sendable {
    private let lock = NSLock()
    private var receipts: [CommitReceipt] = []

    func append(_ receipt: CommitReceipt) {
        lock.lock()
        receipts.append(receipt)
        lock.unlock()
    }

    var all: [CommitReceipt] {
        lock.lock()
        defer { lock.unlock() }
        return receipts
    }
}

/// The stores, so the same tests run against each.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory
    case sqlite
    case postgres

    /// The stores this test run can reach: PostgreSQL only when a server is available (always under CI=true,
    /// where a missing one fails; see PostgresTestServer).
    static var allCases: [StoreKind] { PostgresTestServer.isAvailable ? [.memory, .sqlite, .postgres] : [.memory, .sqlite] }

    var testDescription: String { rawValue }

    /// A fresh store (PostgreSQL: in a new database of the test server); the directory must outlive it.
    func make(in directory: TemporaryDirectory, configuration: StoreConfiguration = .init()) throws -> any RunStore {
        switch self {
        case .memory: MemoryRunStore(configuration: configuration)
        case .sqlite: try SQLiteRunStore(path: directory.path("runs.sqlite"), configuration: configuration)
        case .postgres: try PostgresRunStore(url: PostgresTestServer.shared().createDatabase(), configuration: configuration)
        }
    }
}

import Testing

/// Test values.
enum Sample {
    static func badge(_ id: String, distance: Double) -> Badge {
        try! BadgeColumns.badge(id: id, name: id.capitalized, distance: distance, information: "About \(id) & <co>")
    }

    static func fix(run: Int64, sequence: Int64, rejection: FixRejection? = nil) -> StoredFix {
        let fix = Fix(latitude: 51.5 + Double(sequence) * 0.0001, longitude: -0.12 + Double(sequence) * 0.00005,
                      accuracy: 4 + Double(sequence % 3), timestamp: 1_700_000_000 + Double(sequence) + 0.25)
        return StoredFix(runID: run, sequence: sequence, fix: fix, received: fix.timestamp + 0.5, rejection: rejection)
    }

    static func award(runner: String, run: Int64, badge: Badge, tier: BadgeTier, at time: Double) -> StoredAward {
        StoredAward(runner: runner, runID: run, award: BadgeAward(
            badge: badge, tier: tier, elapsed: time - 1_700_000_000, speed: 3.25,
            coordinate: Coordinate(latitude: 51.51, longitude: -0.11), timestamp: time))
    }
}
