import Foundation
import HTTP
import Wire

/// One position as a phone app posts it over HTTP, read into what the engine takes: the device token, the
/// runner the app names (OwnTracks), and the fix. Pure: every app's format in one place, tested without sockets.
struct DeviceReport: Equatable {
    /// The device identifier the runner pasted into the app: a token from `device:`.
    var token: String
    /// The user the app names (OwnTracks' Basic-auth user or `X-Limit-U`); it must be the token's runner.
    var user: String?
    /// The positions, in the order the request gives them: one for most requests, every one of a batch.
    var positions: [DevicePosition]
    /// The app as the request tells it (for the runner's list of phones): "Traccar Client", "OsmAnd",
    /// "OwnTracks", or the protocol's name when the request does not say.
    var app: String = "OsmAnd protocol"

    /// The first position (most requests carry exactly one).
    var location: LocationCommand { positions[0].location }

    /// Why a request is not a position (answered 400 with the reason), or nothing to do (answered as the app
    /// expects: OwnTracks' other message types).
    enum Problem: Error, Equatable {
        case malformed(String)
        case ignored
        /// An OwnTracks message with `"_type":"encrypted"`: the app encrypts (a secret key is set in it), and the
        /// server cannot read it. The token and user the request names, so the runner can be told.
        case encrypted(token: String?, user: String?)
    }

    /// The OsmAnd protocol (`/osmand`): query parameters on GET or POST, a form body, or Traccar Client 9's JSON.
    static func osmAnd(_ request: HTTPRequest) throws(Problem) -> DeviceReport {
        if request.mediaType == "application/json" || request.body.first == UInt8(ascii: "{") {
            return try osmAndJSON(request.body)
        }
        var items = request.queryItems
        if request.mediaType == "application/x-www-form-urlencoded" {
            guard let form = try? request.formItems() else { throw .malformed("malformed form body") }
            items += form
        }
        func value(_ names: String...) -> String? {
            for name in names { if let item = items.first(where: { $0.name == name }) { return item.value } }
            return nil
        }
        guard let token = value("id", "deviceid"), !token.isEmpty else { throw .malformed("id (the device token) is missing") }
        var latitude = try value("lat").map { text throws(Problem) in try number(text, "lat") }
        var longitude = try value("lon").map { text throws(Problem) in try number(text, "lon") }
        if latitude == nil, let pair = value("location")?.split(separator: ",", omittingEmptySubsequences: false), pair.count == 2 {
            latitude = try number(String(pair[0]), "location")
            longitude = try number(String(pair[1]), "location")
        }
        guard let latitude, let longitude else { throw .malformed("lat and lon are missing") }
        guard let stamp = value("timestamp") else { throw .malformed("timestamp is missing") }
        let time = try timestamp(stamp)
        var accuracy = try value("accuracy").map { text throws(Problem) in try number(text, "accuracy") }
        if accuracy == nil, let hdop = try value("hdop").map({ text throws(Problem) in try number(text, "hdop") }) {
            accuracy = hdop * 5  // a common reading of HDOP as metres of error
        }
        // A position the app itself marks invalid goes to the filter as one it will refuse (and count).
        if let valid = value("valid")?.lowercased(), valid == "false" || valid == "0" { accuracy = .infinity }
        return try make(token: token, user: nil, latitude, longitude, accuracy ?? defaultAccuracy, time)
    }

    /// Traccar Client 9: `{"location": {"timestamp": ISO, "coords": {…}, …}, "device_id": "…"}`.
    static func osmAndJSON(_ body: [UInt8]) throws(Problem) -> DeviceReport {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw .malformed("the body is not a JSON object")
        }
        guard let token = object["device_id"] as? String, !token.isEmpty else { throw .malformed("device_id is missing") }
        let location = (object["location"] as? [String: Any]) ?? ((object["location"] as? [[String: Any]])?.first)
        guard let location, let coords = location["coords"] as? [String: Any],
              let latitude = (coords["latitude"] as? NSNumber)?.doubleValue,
              let longitude = (coords["longitude"] as? NSNumber)?.doubleValue else {
            throw .malformed("location.coords.latitude and longitude are missing")
        }
        let time: Double
        if let text = location["timestamp"] as? String { time = try timestamp(text) }
        else if let number = location["timestamp"] as? NSNumber { time = try timestamp(number.stringValue) }
        else { throw .malformed("location.timestamp is missing") }
        let accuracy = (coords["accuracy"] as? NSNumber)?.doubleValue ?? defaultAccuracy
        return try make(token: token, user: nil, latitude, longitude, accuracy, time)
    }

    /// OwnTracks' HTTP mode (`/owntracks`): `{"_type":"location","lat","lon","tst","acc",…}`, the runner and
    /// token from Basic auth (user, password) or `X-Limit-U` / `X-Limit-D`.
    static func ownTracks(_ request: HTTPRequest) throws(Problem) -> DeviceReport {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            throw .malformed("the body is not a JSON object")
        }
        guard object["_type"] as? String == "location" else { throw .ignored }
        let user: String?, token: String?
        if let credentials = request.basicCredentials {
            (user, token) = (credentials.user, credentials.password)
        } else {
            (user, token) = (request.headers["X-Limit-U"], request.headers["X-Limit-D"])
        }
        guard let token, !token.isEmpty else { throw .malformed("no device token: give it as the Basic-auth password") }
        guard let latitude = (object["lat"] as? NSNumber)?.doubleValue, let longitude = (object["lon"] as? NSNumber)?.doubleValue
        else { throw .malformed("lat and lon are missing") }
        guard let stamp = object["tst"] as? NSNumber else { throw .malformed("tst is missing") }
        let accuracy = (object["acc"] as? NSNumber)?.doubleValue ?? defaultAccuracy
        return try make(token: token, user: user, latitude, longitude, accuracy, try timestamp(stamp.stringValue))
    }

    /// The accuracy assumed when an app sends none, in metres.
    static let defaultAccuracy = 10.0

    private static func make(token: String, user: String?, _ latitude: Double, _ longitude: Double,
                             _ accuracy: Double, _ time: Double) throws(Problem) -> DeviceReport {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
            throw .malformed("lat must be within -90...90 and lon within -180...180")
        }
        // Before 1970 or past the year 5000 a stamp is no clock's: refused as malformed, as a unix time of 0 or
        // less already is (anything between is the filter's to judge).
        guard time > 0, time < latestTime else {
            throw .malformed("timestamp is not a time: \(NumberFormat.plain(time).prefix(40))")
        }
        // The time is kept to the millisecond, and as exactly what its text says: acks name the text, and an
        // answer waits for the ack that covers the number.
        let text = stampText(time)
        let location = LocationCommand(latitude: latitude, longitude: longitude, accuracy: accuracy,
                                       timestamp: Double(text) ?? time, timestampText: text)
        return DeviceReport(token: token, user: user, positions: [DevicePosition(location: location)])
    }

    /// Unix seconds after which a stamp is refused: about the year 5138.
    static let latestTime = 100_000_000_000.0

    /// `1796000000` or `1796000000.5`: whole seconds bare, fractions to the millisecond without trailing zeros
    /// (a fraction that rounds to whole milliseconds of 0 loses its point too), for 0 < `time` < `latestTime`.
    static func stampText(_ time: Double) -> String {
        var text = NumberFormat.string(time, decimals: 3)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func number(_ text: String, _ name: String) throws(Problem) -> Double {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw .malformed("\(name) is not a number: \(text.prefix(40))")
        }
        return value
    }

    /// Unix seconds, unix milliseconds (13 digits, as some apps send) or ISO 8601 (`2024-06-01T07:00:00.250Z`,
    /// or with an offset such as `+02:00`).
    static func timestamp(_ text: String) throws(Problem) -> Double {
        if let value = Double(text), value.isFinite, value > 0 {
            return value > 100_000_000_000 ? value / 1000 : value
        }
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, let base = ISODate.unixSeconds(String(decoding: bytes[0..<19], as: UTF8.self) + "Z") else {
            throw .malformed("timestamp is neither unix seconds nor ISO 8601: \(text.prefix(40))")
        }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            var scale = 0.1
            index += 1
            while index < bytes.count, bytes[index] &- 48 < 10 {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        let zone = String(decoding: bytes[index...], as: UTF8.self)
        var offset = 0.0
        if zone == "Z" || zone.isEmpty {
            offset = 0
        } else if let sign = zone.first, sign == "+" || sign == "-" {
            let digits = zone.dropFirst().filter(\.isNumber)
            guard digits.count == 4, let hours = Double(digits.prefix(2)), let minutes = Double(digits.suffix(2)) else {
                throw .malformed("timestamp has a bad time zone: \(zone)")
            }
            offset = (sign == "+" ? 1 : -1) * (hours * 3600 + minutes * 60)
        } else {
            throw .malformed("timestamp has a bad time zone: \(zone)")
        }
        return base + fraction - offset
    }
}

/// One position of a ``DeviceReport``, with what the app said beside it.
struct DevicePosition: Equatable {
    /// The fix (timestamp text: the unix seconds as a plain decimal).
    var location: LocationCommand
    /// True when the app gave no time and the position carries the time of receipt (as Traccar's server does).
    var stampedOnReceipt = false
    /// The alarm the app raised with this position, lowercased (`sos`, …); nil for none.
    var alarm: String?
    /// The phone's battery level in percent (0...100), when the app sent it.
    var battery: Double?
}
