import MoonRunnerTestSupport
import Testing
@testable import RunStore

@Suite(.mayBlock) struct SHA256Tests {
    /// FIPS 180-2 appendix B vectors and NIST short messages.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func fipsVectors(message: String, digest: String) {
        #expect(SHA256.hexDigest(of: message) == digest)
    }

    @Test func millionAs() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(chunk) }
        let hex = hasher.finalize().map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Messages of 55, 56, 63 and 64 bytes cross the padding boundary; splitting the input must not matter.
    @Test(arguments: [55, 56, 63, 64, 65, 119, 120])
    func paddingBoundariesAndIncrementalUpdates(length: Int) {
        let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var hasher = SHA256()
        hasher.update(message.prefix(length / 3))
        hasher.update(message.dropFirst(length / 3))
        #expect(hasher.finalize() == SHA256.hash(message))
        #expect(SHA256.hash(message).count == 32)
    }

    @Test func runnerKeys() {
        let key = RunnerKey.generate()
        #expect(key.count == 32)
        #expect(key.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(RunnerKey.generate() != key)
        let hash = RunnerKey.hash(key)
        #expect(hash.count == 64 && hash != key)
        #expect(RunnerKey.verify(key, against: hash))
        #expect(RunnerKey.verify(key, against: hash.uppercased()))
        #expect(!RunnerKey.verify(key + "0", against: hash))
        #expect(!RunnerKey.verify(key, against: String(hash.dropLast())))
        #expect(!RunnerKey.verify(key, against: ""))
    }
}
