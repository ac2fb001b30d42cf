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

/// Opens a command's store with `open`, runs `body` on it and closes it; the command's exit status. A store that
/// cannot be opened is the command's error, printed, and exit status 1.
func withStore(for command: String, _ open: () throws(StoreError) -> any RunStore,
               _ body: (any RunStore) -> Int32) -> Int32 {
    let store: any RunStore
    do {
        store = try open()
    } catch {
        printError("moonrunner \(command): \(error)")
        return 1
    }
    defer { store.close() }
    return body(store)
}
