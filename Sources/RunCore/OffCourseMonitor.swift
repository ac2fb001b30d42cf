/// Off-course hysteresis, as ``OffPaceMonitor``'s: off once the runner has stayed beyond the distance for the
/// off duration, back on once within it for the back-on duration. Any fix agreeing with the state ends a
/// contrary stretch, so no single fix flips it. Times are the fixes' own.
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
        let hold = off ? configuration.offCourseDuration : configuration.backOnCourseDuration
        guard time - since >= hold else { return nil }
        isOffCourse = off
        contrarySince = nil
        return off ? .offCourse : .backOnCourse
    }
}
