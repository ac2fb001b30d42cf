import Foundation
import HTTP
import Wire

/// What a phone app posts over HTTP in one request, read into what the engine takes: the device token, the
/// runner the app names (OwnTracks), the app, and the fixes (one, or a batch: a queue the phone sends at once).
/// Pure: every app's format in one place, tested without sockets.
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

    /// The OsmAnd protocol (`/osmand`): query parameters on GET or POST, a form body, Traccar Client 9's JSON
    /// (one location or a batch of them) or Traccar Client 10's JSON array of flat positions. `now` (unix
    /// seconds) is the time of receipt: a position without a time takes it, as Traccar's own server does.
    static func osmAnd(_ request: HTTPRequest, now: Double) throws(Problem) -> DeviceReport {
        if request.mediaType == "application/json" || startsLikeJSON(request.body) {
            let app = appName(request, otherwise: "Traccar Client (JSON)")
            switch try json(request.body) {
            case let object as [String: Any]: return try traccarJSON(object, app: app, now: now)
            case let array as [Any]: return try flatPositions(array, app: app, now: now)
            default: throw .malformed("the body is not a JSON object or array")
            }
        }
        var items = request.queryItems
        if request.mediaType == "application/x-www-form-urlencoded" {
            guard let form = try? request.formItems() else { throw .malformed("malformed form body") }
            items += form
        }
        var fields: [String: Any] = [:]
        for item in items where fields[item.name] == nil { fields[item.name] = item.value }  // the first of a name
        let (token, position) = try flatPosition(fields, now: now)
        return DeviceReport(token: token, user: nil, positions: [position],
                            app: appName(request, otherwise: "OsmAnd protocol"))
    }

    /// One position named as the query form names it (`id`, `lat`, `lon`, `timestamp`, `accuracy`, `batt`,
    /// `alarm`, `valid`, …): a query or form (every value text) or one object of Traccar Client 10's array
    /// (numbers or text).
    private static func flatPosition(_ fields: [String: Any], now: Double) throws(Problem) -> (String, DevicePosition) {
        guard let token = try token(fields["id"] ?? fields["deviceid"], "id") else {
            throw .malformed("id (the device token) is missing")
        }
        var latitude = try number(fields["lat"], "lat")
        var longitude = try number(fields["lon"], "lon")
        if latitude == nil, let text = fields["location"] as? String,
           case let pair = text.split(separator: ",", omittingEmptySubsequences: false), pair.count == 2 {
            latitude = try number(String(pair[0]), "location")
            longitude = try number(String(pair[1]), "location")
        }
        guard let latitude, let longitude else { throw .malformed("lat and lon are missing") }
        var accuracy = try number(fields["accuracy"], "accuracy")
        if accuracy == nil, let hdop = try number(fields["hdop"], "hdop") {
            accuracy = hdop * 5  // a common reading of HDOP as metres of error
        }
        // A position the app itself marks invalid goes to the filter as one it will refuse (and count).
        if isFalse(fields["valid"]) { accuracy = .infinity }
        let (time, stamped) = try time(fields["timestamp"], "timestamp", now: now)
        let alarm = try alarm(fields["alarm"], "alarm"), battery = try percent(fields["batt"], "batt")
        return (token, try position(latitude, longitude, accuracy ?? defaultAccuracy, time, stampedOnReceipt: stamped,
                                    alarm: alarm, battery: battery, altitude: altitude(fields["altitude"])))
    }

    /// Traccar Client 10's `uploadJson`: `[{"id":T,"lat":…,"lon":…,"timestamp":…,…},…]`, every object one
    /// position of the same device.
    private static func flatPositions(_ array: [Any], app: String, now: Double) throws(Problem) -> DeviceReport {
        var token: String?
        let positions = try batch(array) { element throws(Problem) -> DevicePosition? in
            guard let fields = element as? [String: Any] else { throw .malformed("not a JSON object") }
            let (named, position) = try flatPosition(fields, now: now)
            if let token, named != token {
                throw .malformed("id names another device than position 1 does: a batch is one device's")
            }
            token = named
            return position
        }
        return DeviceReport(token: token ?? "", user: nil, positions: positions, app: app)
    }

    /// Traccar Client 9 (the background-geolocation library's form): `{"location": {"timestamp": ISO,
    /// "coords": {…}, "battery": {"level": 0.8}, "extras": {"alarm": "sos"}, …}, "device_id": "…"}`, or with
    /// `location` an array of such objects (a batch).
    private static func traccarJSON(_ object: [String: Any], app: String, now: Double) throws(Problem) -> DeviceReport {
        guard let token = try token(object["device_id"], "device_id") else { throw .malformed("device_id is missing") }
        let positions: [DevicePosition]
        switch object["location"] {
        case let location as [String: Any]:
            positions = [try traccarLocation(location, now: now)]
        case let locations as [Any]:
            positions = try batch(locations) { element throws(Problem) -> DevicePosition? in
                guard let location = element as? [String: Any] else { throw .malformed("location is not a JSON object") }
                return try traccarLocation(location, now: now)
            }
        default:
            throw .malformed("location is missing")
        }
        return DeviceReport(token: token, user: nil, positions: positions, app: app)
    }

    private static func traccarLocation(_ location: [String: Any], now: Double) throws(Problem) -> DevicePosition {
        let coords = location["coords"] as? [String: Any]
        guard let latitude = jsonNumber(coords?["latitude"]), let longitude = jsonNumber(coords?["longitude"]) else {
            throw .malformed("location.coords.latitude and longitude are missing")
        }
        let accuracy = try number(coords?["accuracy"], "location.coords.accuracy") ?? defaultAccuracy
        let (time, stamped) = try time(location["timestamp"], "location.timestamp", now: now)
        var battery: Double?
        // The library's level is a fraction, and -1 where the phone does not tell it (as the iOS simulator).
        if let level = try number((location["battery"] as? [String: Any])?["level"], "location.battery.level"), level >= 0 {
            guard level <= 1 else {
                throw .malformed("location.battery.level is not a fraction 0...1: \(NumberFormat.plain(level).prefix(40))")
            }
            battery = (level * 1000).rounded() / 10
        }
        var alarm = try alarm(location["alarm"], "location.alarm")
        if alarm == nil { alarm = try self.alarm((location["extras"] as? [String: Any])?["alarm"], "location.extras.alarm") }
        return try position(latitude, longitude, accuracy, time, stampedOnReceipt: stamped, alarm: alarm, battery: battery,
                            altitude: altitude(coords?["altitude"]))
    }

    /// OwnTracks' HTTP mode (`/owntracks`): `{"_type":"location","lat","lon","tst","acc","batt",…}`, or an array
    /// of such messages; the runner and token from Basic auth (user, password) or `X-Limit-U` / `X-Limit-D`.
    /// Other message types are ignored (`.ignored` when nothing else came); `"_type":"encrypted"` is
    /// `.encrypted`, since the server holds no key to read it.
    static func ownTracks(_ request: HTTPRequest, now: Double) throws(Problem) -> DeviceReport {
        let body = try json(request.body)
        let user: String?
        var token: String?
        if let credentials = request.basicCredentials {
            (user, token) = (credentials.user, credentials.password)
        } else {
            (user, token) = (request.headers["X-Limit-U"], request.headers["X-Limit-D"])
        }
        if token?.isEmpty == true { token = nil }
        var encrypted = false
        func read(_ message: [String: Any]) throws(Problem) -> DevicePosition? {
            switch message["_type"] as? String {
            case "location":
                guard token != nil else { throw .malformed("no device token: give it as the Basic-auth password") }
                return try ownTracksLocation(message, now: now)
            case "encrypted":
                encrypted = true
                return nil
            default:
                return nil
            }
        }
        let positions: [DevicePosition]
        switch body {
        case let message as [String: Any]:
            positions = try read(message).map { [$0] } ?? []
        case let messages as [Any]:
            positions = try batch(messages) { element throws(Problem) -> DevicePosition? in
                guard let message = element as? [String: Any] else { throw .malformed("not a JSON object") }
                return try read(message)
            }
        default:
            throw .malformed("the body is not a JSON object or array")
        }
        // Readable positions are kept even beside an encrypted message (apps do not mix them).
        guard let token, !positions.isEmpty else {
            throw encrypted ? .encrypted(token: token, user: user?.isEmpty == true ? nil : user) : .ignored
        }
        return DeviceReport(token: token, user: user, positions: positions, app: appName(request, otherwise: "OwnTracks"))
    }

    private static func ownTracksLocation(_ message: [String: Any], now: Double) throws(Problem) -> DevicePosition {
        guard let latitude = jsonNumber(message["lat"]), let longitude = jsonNumber(message["lon"]) else {
            throw .malformed("lat and lon are missing")
        }
        let (time, stamped) = try time(message["tst"], "tst", now: now)
        let accuracy = try number(message["acc"], "acc") ?? defaultAccuracy
        return try position(latitude, longitude, accuracy, time, stampedOnReceipt: stamped, alarm: nil,
                            battery: try percent(message["batt"], "batt"), altitude: altitude(message["alt"]))
    }

    /// The accuracy assumed when an app sends none, in metres.
    static let defaultAccuracy = 10.0

    /// The most positions one request may carry (a phone's queue is sent in parts of at most this).
    static let maximumBatch = 1_000

    /// An array's elements read one by one into positions (nil: an element that is none, as OwnTracks' other
    /// types), all or nothing: a reason names the element (`position 3: …`, counted from 1).
    private static func batch(_ elements: [Any], _ read: (Any) throws(Problem) -> DevicePosition?) throws(Problem)
        -> [DevicePosition] {
        guard !elements.isEmpty else { throw .malformed("the batch is empty") }
        guard elements.count <= maximumBatch else {
            throw .malformed("a batch holds at most \(maximumBatch) positions; this one has \(elements.count)")
        }
        var positions: [DevicePosition] = []
        positions.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do throws(Problem) {
                if let position = try read(element) { positions.append(position) }
            } catch {
                guard case .malformed(let reason) = error else { throw error }
                throw .malformed("position \(index + 1): \(reason)")
            }
        }
        return positions
    }

    /// The app's name from the `User-Agent`'s first product when it names one this server knows, else `form`
    /// (the protocol's name).
    static func appName(_ request: HTTPRequest, otherwise form: String) -> String {
        guard let agent = request.headers["User-Agent"] else { return form }
        let product = agent.prefix { $0 != "/" && $0 != "(" }.lowercased()
        if product.contains("traccar") { return "Traccar Client" }
        if product.contains("osmand") { return "OsmAnd" }
        if product.contains("owntracks") { return "OwnTracks" }
        return form
    }

    private static func startsLikeJSON(_ body: [UInt8]) -> Bool {
        let first = body.first { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    private static func json(_ body: [UInt8]) throws(Problem) -> Any {
        guard let value = try? JSONSerialization.jsonObject(with: Data(body)) else {
            throw .malformed("the body is not a JSON object or array")
        }
        return value
    }

    private static func position(_ latitude: Double, _ longitude: Double, _ accuracy: Double, _ time: Double,
                                 stampedOnReceipt: Bool, alarm: String?, battery: Double?, altitude: Double?) throws(Problem)
        -> DevicePosition {
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
                                       timestamp: Double(text) ?? time, timestampText: text, altitude: altitude)
        return DevicePosition(location: location, stampedOnReceipt: stampedOnReceipt, alarm: alarm, battery: battery)
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

    /// An altitude in metres (`altitude`, OwnTracks' `alt`), nil when absent, not a number, or beyond what any
    /// runner reaches (±20 km): unlike the position's own fields, a bad altitude costs only the altitude, not
    /// the fix.
    private static func altitude(_ value: Any?) -> Double? {
        guard let metres = try? number(value, "altitude"), abs(metres) <= 20_000 else { return nil }
        return metres
    }

    /// A JSON number, or a text that is one (a query's values are all text); nil when absent or null.
    private static func number(_ value: Any?, _ name: String) throws(Problem) -> Double? {
        switch value {
        case nil, is NSNull: return nil
        case let text as String: return try number(text, name)
        default:
            guard let number = jsonNumber(value) else { throw .malformed("\(name) is not a number") }
            return number
        }
    }

    /// A JSON number's value; nil for anything else, true and false too (which Foundation gives as numbers).
    private static func jsonNumber(_ value: Any?) -> Double? {
        guard let number = value as? NSNumber, number.objCType.pointee != CChar(UInt8(ascii: "c")),
              number.doubleValue.isFinite else { return nil }
        return number.doubleValue
    }

    /// A device token: a text, or a whole number (some apps send a numeric identifier as a number).
    private static func token(_ value: Any?, _ name: String) throws(Problem) -> String? {
        switch value {
        case nil, is NSNull: return nil
        case let text as String: return text.isEmpty ? nil : text
        default:
            guard let number = jsonNumber(value), number.rounded() == number, number.magnitude < 1e15 else {
                throw .malformed("\(name) is not a device token")
            }
            return String(Int64(number))
        }
    }

    /// The time a position was taken, and whether it is the time of receipt (`now`, for a position without one).
    private static func time(_ value: Any?, _ name: String, now: Double) throws(Problem) -> (Double, Bool) {
        switch value {
        case nil, is NSNull: return (now, true)
        case let text as String: return (try timestamp(text, name), false)
        default:
            guard let number = jsonNumber(value), number > 0 else { throw .malformed("\(name) is not a time") }
            return (seconds(number), false)
        }
    }

    /// True for `valid=false` (or `0`, or JSON's false or 0).
    private static func isFalse(_ value: Any?) -> Bool {
        switch value {
        case let text as String: return text.lowercased() == "false" || text == "0"
        case let flag as Bool: return !flag
        case let number as NSNumber: return number.doubleValue == 0
        default: return false
        }
    }

    /// A battery level in percent, 0...100; a negative one is the app saying it does not know (nil).
    private static func percent(_ value: Any?, _ name: String) throws(Problem) -> Double? {
        guard let level = try number(value, name), level >= 0 else { return nil }
        guard level <= 100 else {
            throw .malformed("\(name) is not a percentage 0...100: \(NumberFormat.plain(level).prefix(40))")
        }
        return level
    }

    /// An alarm's name, lowercased (`sos`, `general`, `lowbattery`, …): a word of at most 32 letters, digits,
    /// `-` or `_` (it reaches coaches' lines); nil for none or an empty text.
    private static func alarm(_ value: Any?, _ name: String) throws(Problem) -> String? {
        switch value {
        case nil, is NSNull: return nil
        case let text as String:
            let word = text.trimmingCharacters(in: .whitespaces).lowercased()
            guard !word.isEmpty else { return nil }
            let isWordByte = { (byte: UInt8) in byte &- 97 < 26 || byte &- 48 < 10 || byte == 45 || byte == 95 }  // a-z 0-9 - _
            guard word.utf8.count <= 32, word.utf8.allSatisfy(isWordByte) else {
                throw .malformed("\(name) is not a word of letters and digits: \(text.prefix(40))")
            }
            return word
        default: throw .malformed("\(name) is not a word of letters and digits")
        }
    }

    /// Unix seconds as a number, or unix milliseconds (above `latestTime`, as 13 digits are).
    private static func seconds(_ value: Double) -> Double {
        value > latestTime ? value / 1000 : value
    }

    /// Unix seconds, unix milliseconds (13 digits, as some apps send) or ISO 8601 (`2024-06-01T07:00:00.250Z`,
    /// or with an offset such as `+02:00`).
    static func timestamp(_ text: String, _ name: String = "timestamp") throws(Problem) -> Double {
        if let value = Double(text), value.isFinite, value > 0 {
            return seconds(value)
        }
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, let base = ISODate.unixSeconds(String(decoding: bytes[0..<19], as: UTF8.self) + "Z") else {
            throw .malformed("\(name) is neither unix seconds nor ISO 8601: \(text.prefix(40))")
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
                throw .malformed("\(name) has a bad time zone: \(zone.prefix(40))")
            }
            offset = (sign == "+" ? 1 : -1) * (hours * 3600 + minutes * 60)
        } else {
            throw .malformed("\(name) has a bad time zone: \(zone.prefix(40))")
        }
        return base + fraction - offset
    }
}
