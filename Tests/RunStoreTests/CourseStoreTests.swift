import Foundation
import RunCore
import MoonRunnerTestSupport
import Testing
@testable import RunStore

/// Race courses in every store: stored whole (every point of the path, each named point in the file's order),
/// replaced by name, removed.
@Suite(.mayBlock) struct CourseStoreTests {
    static func course(_ name: String, points: Int, created: Double = 1_800_000_000.25) -> StoredCourse {
        // Irregular values, so a rounding or a reordering shows.
        let path = (0..<points).map { index in
            Coordinate(latitude: 52.5163 + Double(index) * 0.000123456789, longitude: 13.3777 - Double(index * index) * 1e-9)
        }
        return StoredCourse(name: name, path: path, points: [
            NamedPlace(name: "Aid 1 \"Tiergarten\" ⛲", coordinate: path[points / 3]),
            NamedPlace(name: "Turn", coordinate: path[points / 2]),
            NamedPlace(name: "Aid 1 \"Tiergarten\" ⛲", coordinate: path[points / 3]),  // passed again on the way back
        ], created: created)
    }

    @Test(arguments: StoreKind.allCases)
    func coursesRoundTripAndAreReplacedAndRemovedByName(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        #expect(try store.courses().isEmpty && store.course(named: "berlin") == nil)
        let berlin = Self.course("berlin", points: 4_000), paris = Self.course("paris", points: 3)
        store.submit(.course(paris))
        store.submit(.course(berlin))
        try store.flushCommitted()
        #expect(try store.course(named: "berlin") == berlin)
        #expect(try store.courses() == [berlin, paris], "every course, by name")
        let corrected = Self.course("berlin", points: 5, created: 1_800_000_100)
        store.submit(.course(corrected))
        store.submit(.removeCourse(name: "paris"))
        store.submit(.removeCourse(name: "nowhere"))
        try store.flushCommitted()
        #expect(try store.courses() == [corrected])
    }

    @Test func anSQLiteFileKeepsItsCoursesAcrossAReopen() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("runs.sqlite")
        let berlin = Self.course("berlin", points: 100)
        do {
            let store = try SQLiteRunStore(path: path)
            store.submit(.course(berlin))
            store.close()
        }
        let reopened = try SQLiteRunStore(path: path)
        defer { reopened.close() }
        #expect(try reopened.course(named: "berlin") == berlin)
    }
}
