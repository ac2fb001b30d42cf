extension SQLiteRunStore {
    /// Every race course, by name.
    public func courses() throws(StoreError) -> [StoredCourse] {
        try reader.read { (database) throws(StoreError) -> [StoredCourse] in
            try database.cachedStatement("SELECT name, created, path, points FROM courses ORDER BY name")
                .rows(Self.course(from:))
        }
    }

    /// The race course with this name.
    public func course(named name: String) throws(StoreError) -> StoredCourse? {
        try reader.read { (database) throws(StoreError) -> StoredCourse? in
            let select = try database.cachedStatement("SELECT name, created, path, points FROM courses WHERE name = ?1")
            defer { select.reset() }
            try select.bind(name, at: 1)
            return try select.step() ? try Self.course(from: select) : nil
        }
    }

    private static func course(from row: Statement) throws(StoreError) -> StoredCourse {
        let name = row.text(at: 0), context = "course \(row.text(at: 0))"
        let path = try StoredCourse.path(fromJSON: JSONColumn.decode([[Double]].self, from: row.text(at: 2), context: context),
                                         context: context)
        let points = try JSONColumn.decode([NamedPlace].self, from: row.text(at: 3), context: context)
        return StoredCourse(name: name, path: path, points: points, created: row.double(at: 1))
    }
}
