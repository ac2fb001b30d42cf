import PostgresRunStore
import RunStore
import ToolSupport

/// The store `serve --db` names: a PostgreSQL database for a `postgres://` (or `postgresql://`) URL, a store in
/// memory for `:memory:`, else an SQLite file (the default, `moonrunner.sqlite`).
func openStore(at location: String, configuration: StoreConfiguration = .init()) throws(StoreError) -> any RunStore {
    if PostgresLocation.isPostgresURL(location) { return try PostgresRunStore(url: location, configuration: configuration) }
    return location == ":memory:" ? MemoryRunStore(configuration: configuration)
        : try SQLiteRunStore(path: location, configuration: configuration)
}

/// Opens a command's store with `open`; nil, after printing why as the command's error, when it cannot be opened
/// (the command then exits 1).
func openedStore(for command: String, _ open: () throws(StoreError) -> any RunStore) -> (any RunStore)? {
    do {
        return try open()
    } catch {
        printError("moonrunner \(command): \(error)")
        return nil
    }
}
