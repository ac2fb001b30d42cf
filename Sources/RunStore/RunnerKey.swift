/// Runner keys: the secret a runner's phone presents. Only their SHA-256 hash is stored.
public enum RunnerKey {
    /// A new key: 32 lowercase hex digits (128 bits) from the system's secure random source.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<32).map { _ in digits[Int(generator.next(upperBound: UInt8(16)))] })
    }

    /// The hash to store: SHA-256 of the key's UTF-8 bytes, 64 lowercase hex digits.
    public static func hash(_ key: String) -> String {
        SHA256.hexDigest(of: key)
    }

    /// True when `key` hashes to `hash`. The comparison takes the same time wherever the hashes differ, so
    /// timing does not reveal how much of a guess was right.
    public static func verify(_ key: String, against hash: String) -> Bool {
        SHA256.constantTimeEqual(Array(Self.hash(key).utf8), Array(hash.lowercased().utf8))
    }
}
