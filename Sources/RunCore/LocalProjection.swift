/// A flat east/north frame in metres around a run's first fix, where the Kalman filter works.
/// The projection is exactly invertible, so its small scale error far from the origin does not
/// affect distances: those are measured geodesically between the unprojected smoothed positions.
struct LocalProjection: Sendable, Hashable {
    /// The frame's origin.
    let origin: Coordinate
    /// Frame metres per degree of latitude.
    let metresPerDegreeNorth: Double
    /// Frame metres per degree of longitude.
    let metresPerDegreeEast: Double

    init(origin: Coordinate) {
        self.origin = origin
        let scale = LocalScale(latitude: origin.latitude)
        metresPerDegreeNorth = scale.metresPerDegreeNorth
        // At a pole a degree of longitude has no length; a floor keeps the frame invertible.
        metresPerDegreeEast = max(scale.metresPerDegreeEast, scale.metresPerDegreeNorth * 1e-3)
    }

    /// East and north metres of a coordinate from the origin (longitudes wrap the short way).
    func project(_ coordinate: Coordinate) -> (east: Double, north: Double) {
        (Geodesy.normalisedDegrees(coordinate.longitude - origin.longitude) * metresPerDegreeEast,
         (coordinate.latitude - origin.latitude) * metresPerDegreeNorth)
    }

    /// The coordinate at east/north metres from the origin.
    func coordinate(east: Double, north: Double) -> Coordinate {
        let latitude = self.latitude(north: north)
        let longitude = Geodesy.normalisedDegrees(origin.longitude + east / metresPerDegreeEast)
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// The latitude at `north` metres from the origin.
    func latitude(north: Double) -> Double {
        min(max(origin.latitude + north / metresPerDegreeNorth, -90), 90)
    }
}
