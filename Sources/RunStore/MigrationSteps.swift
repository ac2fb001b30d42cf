/// A schema step of either store (SQLite's `Migration`, PostgreSQL's `PostgresMigration`): both record the ids
/// of the steps applied in `schema_migrations`, and apply the others the same way.
package protocol MigrationStep {
    /// A stable identifier; never renamed once released.
    var id: String { get }
}

extension Array where Element: MigrationStep {
    /// Applies the steps whose ids are not in `done`, in order, inside the caller's transaction: `apply` runs a
    /// step (its errors say which step failed), then `record` notes its id. Returns the ids applied now.
    ///
    /// A database migrated by a newer build has steps this build does not know: its schema may have changed
    /// under us, so it is refused before anything is written, with `advice` on what to use instead.
    package func apply(skipping done: Set<String>, advice: String,
                       _ apply: (Element) throws(StoreError) -> Void,
                       record: (String) throws(StoreError) -> Void) throws(StoreError) -> [String] {
        let known = Set(map(\.id))
        if let unknown = done.subtracting(known).sorted().first {
            throw StoreError(.newerSchema,
                "the database was migrated by a newer moonrunner (migration \(unknown) is unknown to this build): "
                + advice)
        }
        var applied: [String] = []
        for step in self where !done.contains(step.id) {
            do throws(StoreError) {
                try apply(step)
            } catch {
                throw error.adding(context: "migration \(step.id)")
            }
            try record(step.id)
            applied.append(step.id)
        }
        return applied
    }
}
