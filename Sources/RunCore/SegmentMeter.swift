import Foundation

/// Measures short segments (GPS fix to fix, up to a few hundred metres) on the WGS84 ellipsoid quickly.
///
/// It uses the flat-earth distance with the ellipsoid's meridian and prime-vertical radii at the segment's
/// mean latitude, which for such lengths agrees with the geodesic to micrometres. Instead of calling sin and
/// cos for every segment it keeps the radii at a reference latitude with their first derivatives, and moves
/// the reference when the runner has gone about a kilometre north or south; the first-order correction
/// keeps the error below one part in 10⁸.
struct SegmentMeter: Sendable {
    private var referenceLatitude = Double.infinity
    private var north = 0.0, northSlope = 0.0  // metres per degree of latitude, and its change per degree
    private var east = 0.0, eastSlope = 0.0  // metres per degree of longitude, and its change per degree

    /// The length in metres from `a` to `b`.
    mutating func distance(from a: Coordinate, to b: Coordinate) -> Double {
        let latitude = (a.latitude + b.latitude) / 2
        if abs(latitude - referenceLatitude) > 0.01 { moveReference(to: latitude) }
        let offset = latitude - referenceLatitude
        let dEast = Geodesy.normalisedDegrees(b.longitude - a.longitude) * max(east + eastSlope * offset, 0)
        let dNorth = (b.latitude - a.latitude) * (north + northSlope * offset)
        return (dEast * dEast + dNorth * dNorth).squareRoot()
    }

    private mutating func moveReference(to latitude: Double) {
        let phi = latitude * .pi / 180, radian = Double.pi / 180
        let e2 = Geodesy.flattening * (2 - Geodesy.flattening)
        let s = sin(phi), c = cos(phi)
        let w = 1 - e2 * s * s
        let primeVertical = Geodesy.equatorialRadius / w.squareRoot()
        let meridian = Geodesy.equatorialRadius * (1 - e2) / (w * w.squareRoot())
        referenceLatitude = latitude
        north = meridian * radian
        // dM/dφ = 3 a (1 − e²) e² sin φ cos φ / w^(5/2); d(N cos φ)/dφ = −M sin φ (per radian).
        northSlope = 3 * Geodesy.equatorialRadius * (1 - e2) * e2 * s * c / (w * w * w.squareRoot()) * radian * radian
        east = primeVertical * c * radian
        eastSlope = -meridian * s * radian * radian
    }
}
