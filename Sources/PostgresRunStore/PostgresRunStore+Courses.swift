import RunStore

extension PostgresRunStore {
    /// Every race course, by name.
    public func courses() throws(StoreError) -> [StoredCourse] {
        try reader.read { (connection) throws(StoreError) -> [StoredCourse] in
            try connection.query("SELECT name, created, path, points FROM courses ORDER BY name").rows(Self.course)
        }
    }

    /// The race course with this name.
    public func course(named name: String) throws(StoreError) -> StoredCourse? {
        try reader.read { (connection) throws(StoreError) -> StoredCourse? in
            let rows = try connection.query("SELECT name, created, path, points FROM courses WHERE name = $1", [name])
            return rows.rowCount > 0 ? try Self.course(rows, 0) : nil
        }
    }

    private static func course(_ rows: PostgresResult, _ row: Int) throws(StoreError) -> StoredCourse {
        let name = rows.text(row, 0), context = "course \(rows.text(row, 0))"
        let path = try StoredCourse.path(fromJSON: JSONColumn.decode([[Double]].self, from: rows.text(row, 2), context: context),
                                         context: context)
        let points = try JSONColumn.decode([NamedPlace].self, from: rows.text(row, 3), context: context)
        return StoredCourse(name: name, path: path, points: points, created: try rows.double(row, 1))
    }
}
