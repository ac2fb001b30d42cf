import PostgresRunStore
import RunStore

/// The store `serve --db` names: a PostgreSQL database for a `postgres://` (or `postgresql://`) URL, a store in
/// memory for `:memory:`, else an SQLite file (the default, `moonrunner.sqlite`).
func openStore(at location: String, configuration: StoreConfiguration = .init()) throws(StoreError) -> any RunStore {
    if PostgresLocation.isPostgresURL(location) { return try PostgresRunStore(url: location, configuration: configuration) }
    return location == ":memory:" ? MemoryRunStore(configuration: configuration)
        : try SQLiteRunStore(path: location, configuration: configuration)
}
