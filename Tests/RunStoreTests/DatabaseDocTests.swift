import CSQLite
import Foundation
import MoonRunnerTestSupport
import RunCore
import Testing
@testable import RunStore

/// README's "The database" section: every query it shows runs against a real store file (with SQLite's API,
/// and with the stock `sqlite3` shell when it is installed), and the tables it documents are the schema's.
@Suite(.mayBlock) struct DatabaseDocTests {
    static let readme: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The section from "## The database" to the next "## ".
    static var section: String {
        guard let start = readme.range(of: "## The database") else { return "" }
        let rest = readme[start.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    /// The SQL the section shows: its ```sql blocks and the `sqlite> ` lines of its shell examples (dot
    /// commands left out), one statement per element, comments removed.
    static var statements: [String] {
        var sql = ""
        var inBlock: String?
        for line in section.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                inBlock = inBlock == nil ? String(line.dropFirst(3)) : nil
                continue
            }
            if inBlock == "sql" {
                sql += line.components(separatedBy: "-- ").first! + "\n"
            } else if inBlock == "sh", line.hasPrefix("sqlite> "), !line.hasPrefix("sqlite> .") {
                sql += line.dropFirst("sqlite> ".count) + "\n"
            }
        }
        return sql.components(separatedBy: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
    }

    /// Run 1's fixes: some filtered.
    static let fixes = (Int64(1)...120).map { sequence in
        var fix = FixChunkStoreTests.fix(run: 1, sequence: sequence)
        fix.rejection = sequence % 10 == 0 ? .inaccurate : sequence % 25 == 0 ? .jump : nil
        return fix
    }

    /// A store file with what the queries look at: runner `ann`, her saved run 1 with filtered fixes, a badge.
    static func makeDatabase(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("moonrunner.sqlite")
        let store = try SQLiteRunStore(path: path)
        let run = try store.allocateRunID()
        #expect(run == 1)
        store.submit(.runner(name: "ann", keyHash: RunnerKey.hash("k"), created: 1_767_225_000))
        store.submit(.runStarted(id: run, runner: "ann", started: 1_767_225_600))
        for fix in fixes { store.submit(.fix(fix, acknowledgement: nil)) }
        let moon = Sample.badge("moon", distance: 384.4)
        store.submit(.award(Sample.award(runner: "ann", run: run, badge: moon, tier: .earned, at: 1_767_225_700)))
        var history = BadgeHistory()
        history.records["moon"] = BadgeHistory.Record(earnedAt: 1_767_225_700, referenceSpeed: 3.2, silverAt: nil,
                                                       goldAt: nil, bestSpeed: 3.2)
        store.submit(.history(runner: "ann", history))
        store.submit(.runFinished(RunRecord(id: run, runner: "ann", started: 1_767_225_600, ended: 1_767_225_720,
                                            distance: 412, elapsed: 120, movingTime: 118, status: .saved,
                                            rejections: [.inaccurate: 12, .jump: 2]),
                                  splits: [], checkpoints: []))
        store.close()
        return path
    }

    @Test func theSectionShowsQueries() {
        #expect(Self.statements.count >= 4, "\(Self.statements)")
        #expect(Self.statements.contains { $0.contains("FROM fixes") })
    }

    @Test func everyQueryRunsAndTheFixesQueryCountsByReason() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeDatabase(in: directory)
        let database = try Database(path: path, busyTimeout: 1)
        for sql in Self.statements {
            let statement = try database.prepare(sql)
            var rows: [[String]] = []
            while try statement.step() {
                rows.append((0..<sqlite3_column_count(statement.handle)).map { statement.text(at: $0) })
            }
            #expect(!rows.isEmpty, "no rows from: \(sql)")
            if sql.contains("FROM fixes") && sql.contains("GROUP BY rejection") {
                var expected: [String: Int] = [:]
                for fix in Self.fixes { expected[fix.rejection?.rawValue ?? "", default: 0] += 1 }
                #expect(Set(rows.map { $0.joined(separator: "|") }) == Set(expected.map { "\($0.key)|\($0.value)" }),
                        "\(rows)")
            }
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func theStockShellRunsThemToo() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeDatabase(in: directory)
        let shell = try ChildProcess(executable: "/usr/bin/sqlite3",
                                     arguments: ["-bail", path, Self.statements.joined(separator: ";\n") + ";"])
        #expect(shell.awaitExit() == 0, "\(shell.standardError)")
        #expect(shell.standardError.isEmpty)
        #expect(shell.standardOutput.contains("inaccurate|12"))
        let tables = try ChildProcess(executable: "/usr/bin/sqlite3", arguments: [path, ".tables"])
        #expect(tables.awaitExit() == 0)
        for name in ["fix_chunks", "fixes", "runs", "runners", "badge_awards", "badge_records"] {
            #expect(tables.standardOutput.split(whereSeparator: \.isWhitespace).contains { $0 == name }, "\(name)")
        }
    }

    /// Every table and view of the schema has its `#### name` heading in the section, and every column of
    /// `fix_chunks` and of the `fixes` view is in its table.
    @Test func theSchemaIsDocumented() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeDatabase(in: directory)
        let database = try Database(path: path, busyTimeout: 1)
        let objects = try database.prepare("""
            SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
                AND name NOT IN ('schema_migrations', 'store_meta')
            """)
        while try objects.step() {
            let name = objects.text(at: 0)
            #expect(Self.section.contains("#### `\(name)`"), "\(name) has no heading in README")
        }
        for object in ["fix_chunks", "fixes"] {
            guard let heading = Self.section.range(of: "#### `\(object)`") else { continue }
            let rest = Self.section[heading.upperBound...]
            let table = String(rest[..<(rest.range(of: "\n#### ")?.lowerBound ?? rest.endIndex)])
            let columns = try database.prepare("SELECT name FROM pragma_table_info('\(object)')")
            while try columns.step() {
                let column = columns.text(at: 0)
                #expect(table.contains("`\(column)`"), "\(object).\(column) is not documented")
            }
        }
    }
}
