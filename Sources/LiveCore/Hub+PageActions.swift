import Foundation
import HTTP
import RunCore
import Wire

/// The runner page's actions, proved with the runner's key (`Authorization: Bearer KEY`, or a form field `key`;
/// a wrong key counts as a wrong token): the phones' list and a new device token, the stop button, the course
/// choice.
extension Hub {
    /// `GET /runners/NAME/devices`: 200 `{"devices":[…]}`, 403 for an unknown runner or a wrong key.
    func listDevices(_ request: HTTPRequest, runner name: String, from id: ConnectionID, address: String, now: Double) {
        guard proves(request, runner: name, form: [], from: id, address: address, now: now) else { return }
        effects.respond(id, Self.deviceListJSON(deviceEvents(of: name)))
    }

    /// `POST /runners/NAME/devices` (form fields `key` and `label`, both optional): 201 `{"token":"…"}` once the
    /// token is stored; 400 for a bad label; 403 as `GET`.
    func addDeviceFromPage(_ request: HTTPRequest, runner name: String, from id: ConnectionID, address: String,
                           now: Double) {
        let form = (try? request.formItems()) ?? []
        guard proves(request, runner: name, form: form, from: id, address: address, now: now) else { return }
        var label: String?
        if let text = form.first(where: { $0.name == "label" })?.value.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            do throws(WireError) {
                label = try Command.checkedDeviceLabel(text)
            } catch {
                return effects.respond(id, .text(.badRequest, error.reason + "\n"))
            }
        }
        let token = issueDeviceToken(for: name, label: label, now: now)
        var json = Array(#"{"token":"#.utf8)
        JSONSyntax.appendString(token, to: &json)
        json.append(UInt8(ascii: "}"))
        effects.respondOnceStored(id, .json(json, status: HTTPStatus(201, "Created")))
    }

    /// `POST /runners/NAME/stop`, the page's stop button: 200 `{"run":ID}` once the run is saved, 409 without a
    /// live run, 403 for an unknown runner or a wrong key.
    func stopRunFromPage(_ request: HTTPRequest, runner name: String, from id: ConnectionID, address: String,
                         now: Double) {
        guard proves(request, runner: name, form: (try? request.formItems()) ?? [], from: id, address: address, now: now)
        else { return }
        guard let runID = stopRun(runner: name, now: now) else {
            return effects.respond(id, .text(HTTPStatus(409, "Conflict"), "\(name) has no run in progress\n"))
        }
        effects.respondOnceStored(id, .json(Array(#"{"run":\#(runID)}"#.utf8)))
    }

    /// `POST /runners/NAME/course`, the page's course choice, form field `course`: a course's name, or `off` (or
    /// empty) for none. 200 `{"course":"NAME","dist":M,"points":N}` or `{"course":null}`, 404 for a name no
    /// stored course has, 400 for a bad name, 403 for an unknown runner or a wrong key. A course the hub has not
    /// read yet is looked up first (``HubEffect/lookUp(_:then:from:)``), and the request decided again.
    func setCourseFromPage(_ request: HTTPRequest, runner name: String, from id: ConnectionID, address: String,
                           now: Double) {
        let form = (try? request.formItems()) ?? []
        guard proves(request, runner: name, form: form, from: id, address: address, now: now) else { return }
        let given = form.first { $0.name == "course" }?.value.trimmingCharacters(in: .whitespaces) ?? ""
        let wanted: String? = given.isEmpty || given == "off" ? nil : given
        if let wanted, !Command.isValidName(wanted) {
            return effects.respond(id, .text(.badRequest, "not a course name: \(wanted)\n"))
        }
        if let answer = follow(course: wanted, runner: name) {
            return effects.respond(id, Self.courseChoice(answer))
        }
        guard let wanted, !unknownCourses.contains(wanted) else {
            return effects.respond(id, .text(.notFound, "no course \(wanted ?? "")\n"))
        }
        effects.lookUp(.course(wanted), then: .request(.runnerAction(runner: name, action: .course), request, address: address),
                       from: id)
    }

    /// True when the request proves runner `name` on the loop that owns it; otherwise it is answered (403 or
    /// 429) or handed over to that loop (whose hub has the phones' last posts).
    private func proves(_ request: HTTPRequest, runner name: String, form: [HTTPQueryItem], from id: ConnectionID,
                        address: String, now: Double) -> Bool {
        guard ownsRunner(name) else {
            effects.handOver(id, runner: name)
            return false
        }
        guard let key = Self.key(of: request, form: form), isProved(runner: name, key: key) else {
            answerWrongGuess(.text(.forbidden, "unknown runner or wrong key\n"), to: id, address: address, target: name,
                             now: now)
            return false
        }
        return true
    }

    /// The runner's key from `Authorization: Bearer KEY`, or the form field `key`.
    private static func key(of request: HTTPRequest, form: [HTTPQueryItem]) -> String? {
        request.headers["Authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            ?? form.first { $0.name == "key" }?.value
    }

    /// `{"devices":[…]}`: each phone as its `device:` line's JSON (`id`, `label`, `created`, `app`, `seen`,
    /// `batt`, `encrypted`, and `note` when encrypted).
    static func deviceListJSON(_ phones: [DeviceEvent]) -> HTTPResponse {
        var json = Array(#"{"devices":["#.utf8)
        for (index, phone) in phones.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            phone.appendJSON(to: &json)
        }
        json += Array("]}".utf8)
        return .json(json)
    }

    /// `{"course":"NAME","dist":M,"points":N}`, or `{"course":null}` for none.
    static func courseChoice(_ course: Course?) -> HTTPResponse {
        guard let course else { return .json(Array(#"{"course":null}"#.utf8)) }
        var json = Array(#"{"course":"#.utf8)
        JSONSyntax.appendString(course.name, to: &json)
        json += Array(#","dist":\#(NumberFormat.string(course.length, decimals: 2)),"points":\#(course.points.count)}"#.utf8)
        return .json(json)
    }
}
