/// Off-course hysteresis, as ``OffPaceMonitor``'s: off once the runner has stayed beyond the distance for the
/// off duration (sooner the farther off: see ``offHold(distance:configuration:)``), back on once within it for
/// the back-on duration. Any fix agreeing with the state ends a contrary stretch, so no single fix flips it.
/// Times are the fixes' own.
struct OffCourseMonitor: Sendable, Hashable {
    /// What changed with one fix.
    enum Change: Sendable, Hashable {
        /// Beyond the distance for the off duration.
        case offCourse
        /// Within it for the back-on duration after an `offCourse`.
        case backOnCourse
    }

    /// True between an `offCourse` and the next `backOnCourse`.
    private(set) var isOffCourse = false
    /// Time of the first fix of the current contrary stretch, nil when there is none.
    private var contrarySince: Double?

    /// One fix `distance` metres from the course at `time`; the change to announce, if any.
    mutating func observe(distance: Double, at time: Double, configuration: CourseConfiguration) -> Change? {
        let off = distance > configuration.offCourseDistance
        guard off != isOffCourse else {
            contrarySince = nil
            return nil
        }
        let since = contrarySince ?? time
        contrarySince = since
        let hold = off ? Self.offHold(distance: distance, configuration: configuration)
            : configuration.backOnCourseDuration
        guard time - since >= hold else { return nil }
        isOffCourse = off
        contrarySince = nil
        return off ? .offCourse : .backOnCourse
    }

    /// Seconds beyond the distance before `off_course`, for a fix `distance` metres off: the off duration at the
    /// distance, shortened in proportion as the runner gets farther, down to half of it at twice the distance.
    /// A runner turning straight away from the course at 3.3 m/s is 50 m off after 15 s and 100 m off after
    /// 30 s, so is told 30 s after leaving it rather than 45 s; GPS noise (a tenth of the distance) never gets
    /// that far.
    static func offHold(distance: Double, configuration: CourseConfiguration) -> Double {
        let full = configuration.offCourseDuration
        return max(full / 2, full * configuration.offCourseDistance / max(distance, configuration.offCourseDistance))
    }
}
