import Foundation
import Testing

/// Tests whose waits follow another program's or the main actor's pace (a terminal program's screen in tmux, a
/// main-actor view model's turns, compiling the client guide's samples) rather than one awaited event: on a
/// machine whose two cores are busy with the rest of the suite their generous deadlines can still run out.
/// `.ci/run` gives them a step of their own: its main `swift test` sets `MOONRUNNER_QUIET_TESTS=apart`, which
/// skips these here (saying so), and the next step runs them alone. A plain `swift test` runs them as any other.
public enum QuietMachine {
    /// Set to `apart` to leave these suites to a step of their own.
    public static let environmentVariable = "MOONRUNNER_QUIET_TESTS"

    /// False when this run leaves them to another step.
    public static let runsHere: Bool = ProcessInfo.processInfo.environment[environmentVariable] != "apart"

    /// Why they are skipped, for `.enabled(if:)`.
    public static let reason = "\(environmentVariable)=apart: run in CI's quiet-machine step"
}

extension Trait where Self == ConditionTrait {
    /// Runs the suite only where ``QuietMachine/runsHere``.
    public static var quietMachine: Self {
        .enabled(if: QuietMachine.runsHere, Comment(rawValue: QuietMachine.reason))
    }
}
