import Wire

/// The `loc:` line a benchmark runner sends: its latitude and longitude to 7 decimals, an accuracy of 5 m, and
/// its timestamp in microseconds. The load and soak runners send the same line.
enum FixLine {
    /// Appends `loc:LAT,LON,5,TS` and a newline to `buffer`.
    static func append(latitude: Double, longitude: Double, micros: Int64, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: "loc:".utf8)
        NumberFormat.append(latitude, decimals: 7, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        NumberFormat.append(longitude, decimals: 7, to: &buffer)
        buffer.append(contentsOf: ",5,".utf8)
        LoadClock.appendTimestamp(micros, to: &buffer)
        buffer.append(UInt8(ascii: "\n"))
    }
}
