/// Distances on the WGS84 ellipsoid.
public enum Geodesy {
    /// The inverse geodesic distance in metres between two points (within 1 mm of GeographicLib up to 100 km).
    public static func distance(from a: Coordinate, to b: Coordinate) -> Double { fatalError("TODO") }
}
