import Foundation

/// Distances on the WGS84 ellipsoid.
///
/// ``distance(from:to:)`` solves the inverse geodesic problem with Vincenty's iteration, which for
/// the distances a run deals in (up to 100 km) agrees with GeographicLib to well under a millimetre
/// anywhere on Earth, including the poles, the equator and across the antimeridian. Vincenty's
/// iteration can fail to converge only for nearly antipodal points; there it falls back to the
/// Andoyer–Lambert approximation (tens of metres), which is safe and never NaN.
public enum Geodesy {
    /// WGS84 semi-major axis in metres.
    public static let equatorialRadius = 6_378_137.0
    /// WGS84 flattening.
    public static let flattening = 1 / 298.257_223_563
    /// WGS84 semi-minor axis in metres.
    public static let polarRadius = equatorialRadius * (1 - flattening)

    /// The inverse geodesic distance in metres between two points (within 1 mm of GeographicLib up to 100 km).
    public static func distance(from a: Coordinate, to b: Coordinate) -> Double {
        vincentyDistance(a, b) ?? andoyerLambertDistance(a, b)
    }

    /// A fast approximation for short distances (a few kilometres at most): the flat-earth distance
    /// using the ellipsoid's meridian and prime-vertical radii at the mean latitude.
    /// Relative error is about (d / 6400 km)², so micrometres for the length of a GPS segment.
    public static func shortDistance(from a: Coordinate, to b: Coordinate) -> Double {
        let scale = LocalScale(latitude: (a.latitude + b.latitude) / 2)
        let east = normalisedDegrees(b.longitude - a.longitude) * scale.metresPerDegreeEast
        let north = (b.latitude - a.latitude) * scale.metresPerDegreeNorth
        return (east * east + north * north).squareRoot()
    }

    /// A longitude difference in degrees reduced to -180..<180, so paths cross the antimeridian the short way.
    static func normalisedDegrees(_ degrees: Double) -> Double {
        guard abs(degrees) > 180 else { return degrees == 180 ? -180 : degrees }
        let reduced = degrees.truncatingRemainder(dividingBy: 360)
        if reduced >= 180 { return reduced - 360 }
        if reduced < -180 { return reduced + 360 }
        return reduced
    }

    /// Sine and cosine of the reduced (parametric) latitude, computed without tan so the poles are exact.
    private static func reducedLatitude(_ degrees: Double) -> (sin: Double, cos: Double) {
        let phi = degrees * .pi / 180
        let s = (1 - flattening) * sin(phi), c = cos(phi)
        let h = (s * s + c * c).squareRoot()
        return (s / h, c / h)
    }

    /// Vincenty's inverse method; nil when the λ iteration does not converge (nearly antipodal points).
    private static func vincentyDistance(_ p: Coordinate, _ q: Coordinate) -> Double? {
        let f = flattening, a = equatorialRadius, b = polarRadius
        let lambdaZero = normalisedDegrees(q.longitude - p.longitude) * .pi / 180
        let (sinU1, cosU1) = reducedLatitude(p.latitude)
        let (sinU2, cosU2) = reducedLatitude(q.latitude)
        var lambda = lambdaZero
        for _ in 0..<200 {
            let sinLambda = sin(lambda), cosLambda = cos(lambda)
            let x = cosU2 * sinLambda
            let y = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            let sinSigma = (x * x + y * y).squareRoot()
            if sinSigma == 0 { return 0 }  // coincident points
            let cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            let sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            let cosSqAlpha = 1 - sinAlpha * sinAlpha
            // On the equator cos²α is 0 and the term vanishes with it.
            let cos2SigmaM = cosSqAlpha == 0 ? 0 : cosSigma - 2 * sinU1 * sinU2 / cosSqAlpha
            let c = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
            let previous = lambda
            lambda = lambdaZero + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-14 {
                let uSq = cosSqAlpha * (a * a - b * b) / (b * b)
                let bigA = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
                let bigB = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
                let c2m = cos2SigmaM, c2mSq = c2m * c2m
                let deltaSigma = bigB * sinSigma * (c2m + bigB / 4 * (cosSigma * (-1 + 2 * c2mSq)
                    - bigB / 6 * c2m * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * c2mSq)))
                return b * bigA * (sigma - deltaSigma)
            }
        }
        return nil
    }

    /// The Andoyer–Lambert approximation: the great-circle angle on the sphere, corrected to first
    /// order in the flattening. Used only where Vincenty does not converge.
    private static func andoyerLambertDistance(_ p: Coordinate, _ q: Coordinate) -> Double {
        let f = flattening
        let (sinU1, cosU1) = reducedLatitude(p.latitude)
        let (sinU2, cosU2) = reducedLatitude(q.latitude)
        let dLambda = normalisedDegrees(q.longitude - p.longitude) * .pi / 180
        let cosSigma = max(-1, min(1, sinU1 * sinU2 + cosU1 * cosU2 * cos(dLambda)))
        let sigma = acos(cosSigma)
        let sinSigma = sin(sigma)
        guard sinSigma > 1e-12 else { return equatorialRadius * sigma }
        let betaMean = (asin(sinU1) + asin(sinU2)) / 2, betaHalf = (asin(sinU2) - asin(sinU1)) / 2
        let pTerm = pow(sin(betaMean) * cos(betaHalf), 2)
        let qTerm = pow(cos(betaMean) * sin(betaHalf), 2)
        let xTerm = (sigma - sinSigma) * pTerm / pow(cos(sigma / 2), 2)
        let yTerm = (sigma + sinSigma) * qTerm / pow(sin(sigma / 2), 2)
        let result = equatorialRadius * (sigma - f / 2 * (xTerm + yTerm))
        return result.isFinite ? result : equatorialRadius * sigma
    }
}

/// Metres per degree of latitude and longitude at one latitude on the WGS84 ellipsoid.
struct LocalScale: Sendable, Hashable {
    /// Metres per degree northwards (meridian radius of curvature).
    var metresPerDegreeNorth: Double
    /// Metres per degree eastwards (prime-vertical radius × cos latitude).
    var metresPerDegreeEast: Double

    init(latitude: Double) {
        let phi = latitude * .pi / 180
        let e2 = Geodesy.flattening * (2 - Geodesy.flattening)
        let s = sin(phi)
        let w = 1 - e2 * s * s
        let primeVertical = Geodesy.equatorialRadius / w.squareRoot()
        let meridian = Geodesy.equatorialRadius * (1 - e2) / (w * w.squareRoot())
        metresPerDegreeNorth = meridian * .pi / 180
        metresPerDegreeEast = primeVertical * cos(phi) * .pi / 180
    }
}
