import LiveCore
import HTTP
import RunCore
import RunStore
import Wire

extension ServerCore {
    /// `POST /runners/NAME/course`, the runner page's course choice (the key as for its phones), form field
    /// `course`: a course's name, or `off` (or empty) for none. 200 `{"course":"NAME","dist":M,"points":N}` or
    /// `{"course":null}`, 404 for a name no stored course has, 400 for a bad name, 403 for an unknown runner or
    /// a wrong key. A course the hub has not read yet is read and built off the loop first.
    func setCourseFromPage(_ request: HTTPRequest, runner name: String, on connection: HTTPConnection, now: Double) {
        let form = (try? request.formItems()) ?? []
        guard provedOnOwnLoop(request, runner: name, form: form, on: connection, now: now) else { return }
        let given = form.first { $0.name == "course" }?.value.trimmingCharacters(in: .whitespaces) ?? ""
        let wanted: String? = given.isEmpty || given == "off" ? nil : given
        if let wanted, !Command.isValidName(wanted) {
            return write(.text(.badRequest, "not a course name: \(wanted)\n"), to: connection, keepAlive: request.keepAlive)
        }
        if let answer = decide({ $0.follow(course: wanted, runner: name) }) {
            return write(Self.courseChoice(answer), to: connection, keepAlive: request.keepAlive)
        }
        guard let wanted, !readsAreFull else {
            return write(.text(.serviceUnavailable, "too many reads waiting: try again shortly\n"), to: connection,
                         keepAlive: request.keepAlive)
        }
        connection.isAwaitingResponse = true
        let id = connection.id, keepAlive = request.keepAlive, logger = self.logger
        readOffLoop(flushing: false, { store -> Course? in
            guard let stored = try? store.course(named: wanted) else { return nil }
            do {
                return try stored.course()
            } catch {
                logger.write("course \(wanted) in the store does not build: \(error)")
                return nil
            }
        }) { [unowned self] course in
            guard let connection = connections[id] as? HTTPConnection else { return }
            connection.isAwaitingResponse = false
            decide { $0.learnedCourse(course, named: wanted) }
            let answer = course == nil ? nil : decide { $0.follow(course: wanted, runner: name) }
            write(answer.map(Self.courseChoice) ?? .text(.notFound, "no course \(wanted)\n"), to: connection,
                  keepAlive: keepAlive)
            answerRequests(connection, now: Self.now())
        }
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
