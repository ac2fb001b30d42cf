import LiveCore
import Foundation
import HTTP
import Wire

/// The page's "Connect a phone" box: `GET /runners/NAME/devices` lists the runner's phones, `POST` makes a
/// device token (with an optional `label`). The key comes as `Authorization: Bearer KEY` (or, for `POST`, a form
/// field `key`); a wrong key counts as a wrong token.
extension ServerCore {
    /// `GET /runners/NAME/devices`: 200 `{"devices":[…]}`, 403 for an unknown runner or a wrong key.
    func listDevices(_ request: HTTPRequest, runner name: String, on connection: HTTPConnection, now: Double) {
        guard provedOnOwnLoop(request, runner: name, form: [], on: connection, now: now) else { return }
        write(Self.deviceListJSON(hub.deviceEvents(of: name)), to: connection, keepAlive: request.keepAlive)
    }

    /// `POST /runners/NAME/devices` (form fields `key` and `label`, both optional): 201 `{"token":"…"}`; 400 for a
    /// bad label; 403 as `GET`.
    func addDeviceFromPage(_ request: HTTPRequest, runner name: String, on connection: HTTPConnection, now: Double) {
        let form = (try? request.formItems()) ?? []
        guard provedOnOwnLoop(request, runner: name, form: form, on: connection, now: now) else { return }
        var label: String?
        if let text = form.first(where: { $0.name == "label" })?.value.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            do throws(WireError) {
                label = try Command.checkedDeviceLabel(text)
            } catch {
                return write(.text(.badRequest, error.reason + "\n"), to: connection, keepAlive: request.keepAlive)
            }
        }
        let token = decide { $0.issueDeviceToken(for: name, label: label, now: now) }
        var json = Array(#"{"token":"#.utf8)
        JSONSyntax.appendString(token, to: &json)
        json.append(UInt8(ascii: "}"))
        respondOnceStored(.json(json, status: HTTPStatus(201, "Created")), to: connection, keepAlive: request.keepAlive)
    }

    /// The runner's key from `Authorization: Bearer KEY`, or the form field `key`.
    private static func key(of request: HTTPRequest, form: [HTTPQueryItem]) -> String? {
        request.headers["Authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            ?? form.first { $0.name == "key" }?.value
    }

    /// True when the request proves runner `name` on the loop that owns it; otherwise it is answered (403 or
    /// 429) or moved to that loop (whose hub has the phones' last posts).
    func provedOnOwnLoop(_ request: HTTPRequest, runner name: String, form: [HTTPQueryItem], on connection: HTTPConnection,
                                 now: Double) -> Bool {
        if let owner = otherOwner(of: name) {
            move(connection, to: owner, .http(parser: connection.parser, idleSince: connection.idleSince, request: request))
            return false
        }
        guard let key = Self.key(of: request, form: form), hub.isProved(runner: name, key: key) else {
            answerWrongGuess(.text(.forbidden, "unknown runner or wrong key\n"), to: connection,
                             keepAlive: request.keepAlive, target: name, now: now)
            return false
        }
        return true
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
}
