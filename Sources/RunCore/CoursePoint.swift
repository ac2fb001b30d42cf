/// A named point of a ``Course`` (an aid station, a km mark), placed where the course passes it.
public struct CoursePoint: Sendable, Hashable {
    /// The name from the file (`<wpt><name>`).
    public var name: String
    /// Where the file puts it (it may stand beside the course).
    public var coordinate: Coordinate
    /// Metres along the course of its pass (see ``Course`` for which pass).
    public var along: Double
    /// Its position among the course's points, 0-based, in course order.
    public var index: Int

    /// Creates a point.
    public init(name: String, coordinate: Coordinate, along: Double, index: Int) {
        self.name = name
        self.coordinate = coordinate
        self.along = along
        self.index = index
    }
}
