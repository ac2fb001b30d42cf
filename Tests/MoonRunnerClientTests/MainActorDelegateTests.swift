import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import Testing

/// A view model as app code writes it: on the main actor, with plain mutable state.
@MainActor final class RunViewModel: MoonRunnerClientMainActorDelegate {
    var cheers: [String] = []
    var states: [ConnectionState] = []
    private var waiting: (count: Int, continuation: CheckedContinuation<Void, Never>)?

    func client(_ client: MoonRunnerClient, didReceiveCheer event: CheerEvent) {
        MainActor.preconditionIsolated("delegate calls run on the main actor")
        cheers.append(event.text)
        if let waiting, cheers.count >= waiting.count {
            self.waiting = nil
            waiting.continuation.resume()
        }
    }

    func client(_ client: MoonRunnerClient, didChangeState state: ConnectionState) {
        states.append(state)
    }

    /// Returns once `count` cheers arrived.
    func cheers(_ count: Int) async {
        guard cheers.count < count else { return }
        await withCheckedContinuation { waiting = (count, $0) }
    }
}

@Suite(.mayBlock, .quietMachine) struct MainActorDelegateTests {
    @MainActor @Test func aMainActorViewModelGetsEveryEventInOrderOnTheMainActor() async throws {
        let fake = try FakeServer()
        defer { fake.close() }
        let client = MoonRunnerClient(host: "127.0.0.1", port: fake.port)
        defer { client.close() }
        let model = RunViewModel()
        client.mainActorDelegate = model
        try client.watch("ann")
        let peer = try await fake.accepted()
        #expect(try await peer.line() == "watch:ann")
        let texts = (1...50).map { "cheer \($0)" }
        try peer.send(texts.map { "msg:ann from=anon text=\"\($0)\"" })
        await model.cheers(50)
        #expect(model.cheers == texts)
        #expect(model.states.prefix(2) == [.connecting, .connected])
    }
}
