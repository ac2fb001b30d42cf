import Foundation
import Wire

/// libFuzzer entry: the event parser the client uses (`ServerEvent(event: Event.parse(bytes))`) either throws
/// a `WireError` or gives an event whose canonical line reads back as an event with the same line, whose bytes form is
/// that line, and whose JSON (what the web page's event streams send) is a valid JSON object.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerEvent(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    guard let generic = try? Event.parse(bytes) else { return 0 }
    checkJSON(of: generic)
    guard let event = try? ServerEvent(event: generic) else { return 0 }
    // A line may carry more decimals than the canonical one keeps (`time=3.111` prints as `time=3.1`), so the
    // promise is about the canonical line: it reads back as an event whose line is itself, and stays put.
    let line = event.line
    let reparsed: ServerEvent
    do { reparsed = try ServerEvent(line: line) } catch {
        preconditionFailure("the canonical line \(line.debugDescription) does not parse: \(error)")
    }
    precondition(reparsed.line == line, "the canonical line \(line.debugDescription) prints as \(reparsed.line.debugDescription)")
    precondition(reparsed.kind == event.kind && reparsed.runner == event.runner, "kind or runner changed: \(line)")
    let again = try? ServerEvent(line: reparsed.line)
    precondition(again == reparsed, "the canonical line \(line.debugDescription) does not read the same twice")
    var encoded: [UInt8] = []
    event.append(to: &encoded)
    precondition(encoded == Array((line + "\n").utf8), "append(to:) differs from line")
    checkJSON(of: event.event)
    return 0
}

/// Traps unless the event's JSON form is one valid JSON object.
private func checkJSON(of event: Event) {
    var json: [UInt8] = []
    event.appendJSON(to: &json)
    do {
        let object = try JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed])
        precondition(object is [String: Any], "the JSON is not an object: \(String(decoding: json, as: UTF8.self))")
    } catch {
        preconditionFailure("invalid JSON \(String(decoding: json, as: UTF8.self).debugDescription): \(error)")
    }
}
