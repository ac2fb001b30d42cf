import CSQLite
import Testing
@testable import PostgresRunStore
@testable import RunStore

/// One error type for every backend: each backend's codes map to the kinds a caller decides on (retry or drop,
/// what to tell the user), and the code itself stays underneath for the log.
@Suite struct StoreErrorTests {
    @Test func sqliteCodesMapToKindsAndStayUnderneath() {
        let ioErrorWrite = SQLITE_IOERR | (3 << 8)  // SQLITE_IOERR_WRITE, an extended code (a macro Swift does not import)
        let write = StoreError(sqlite: ioErrorWrite, "committing")
        #expect(write.kind == .unavailable && write.isTransient && write.sqlitePrimaryCode == SQLITE_IOERR)
        #expect(write.description == "committing (SQLite error \(ioErrorWrite): disk I/O error)")
        let cases: [(Int32, StoreError.Kind, transient: Bool)] = [
            (SQLITE_BUSY, .busy, true), (SQLITE_LOCKED, .busy, true), (SQLITE_FULL, .full, true),
            (SQLITE_READONLY, .readOnly, true), (SQLITE_CANTOPEN, .unavailable, true), (SQLITE_NOMEM, .outOfMemory, true),
            (SQLITE_INTERRUPT, .interrupted, true), (SQLITE_CORRUPT, .corrupt, false), (SQLITE_NOTADB, .corrupt, false),
            (SQLITE_CONSTRAINT, .constraint, false), (SQLITE_MISUSE, .misuse, false), (SQLITE_ERROR, .other, false),
        ]
        for (code, kind, transient) in cases {
            let error = StoreError(sqlite: code, "x")
            #expect(error.kind == kind && error.isTransient == transient, "SQLite \(code)")
        }
    }

    @Test func postgresStatesMapToTheSameKinds() {
        let lost = PostgresErrors.storeError(sqlState: nil, message: "server closed the connection", connectionLost: true,
                                             context: "batch")
        #expect(lost.kind == .unavailable && lost.isTransient && lost.underlying == .postgres(sqlState: "08006"))
        #expect(lost.description == "batch: server closed the connection (PostgreSQL SQLSTATE 08006)")
        let cases: [(String, StoreError.Kind, transient: Bool)] = [
            ("40001", .busy, true), ("53300", .busy, true), ("57014", .interrupted, true), ("53100", .full, true),
            ("25006", .readOnly, true), ("3D000", .unavailable, true), ("23505", .constraint, false),
            ("22P02", .mismatch, false), ("28P01", .refused, false), ("XX001", .corrupt, false), ("42P01", .other, false),
        ]
        for (state, kind, transient) in cases {
            let error = PostgresErrors.storeError(sqlState: state, message: "x", connectionLost: false, context: "c")
            #expect(error.kind == kind && error.isTransient == transient, "SQLSTATE \(state)")
        }
    }

    @Test func errorsFromNoDatabaseSayOnlyTheirMessage() {
        #expect(StoreError.closed.description == "the run store is closed" && StoreError.closed.kind == .misuse)
        let input = StoreError.invalidInput("line 2: track point without a <time>")
        #expect(input.description == "line 2: track point without a <time>" && !input.isTransient)
        #expect(input.adding(context: "ann.gpx").message == "ann.gpx: line 2: track point without a <time>")
    }
}
