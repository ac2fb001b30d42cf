import CCrypto

/// SHA-256 by OpenSSL's libcrypto (`EVP_sha256`): cryptography is not ours to write. A value type: a copy
/// hashes on independently (the digest context is copied on write). Not `Sendable`: its context is a C handle,
/// and a hasher is used where its bytes are.
public struct SHA256 {
    /// Owns one `EVP_MD_CTX`; freed with the object.
    private final class Context {
        let handle: OpaquePointer

        init() {
            guard let handle = EVP_MD_CTX_new(), EVP_DigestInit_ex(handle, EVP_sha256(), nil) == 1 else {
                // Only a failed allocation can get here: there is nothing sensible left to do.
                fatalError("libcrypto: cannot set up a SHA-256 context")
            }
            self.handle = handle
        }

        init(copying other: Context) {
            guard let handle = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(handle, other.handle) == 1 else {
                fatalError("libcrypto: cannot copy a SHA-256 context")
            }
            self.handle = handle
        }

        deinit { EVP_MD_CTX_free(handle) }
    }

    private var context = Context()

    /// A hasher with nothing hashed yet.
    public init() {}

    /// Hashes more bytes.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if !isKnownUniquelyReferenced(&context) { context = Context(copying: context) }
        let handle = context.handle
        let done = bytes.withContiguousStorageIfAvailable { buffer in
            EVP_DigestUpdate(handle, buffer.baseAddress, buffer.count)
        } ?? Array(bytes).withUnsafeBufferPointer { EVP_DigestUpdate(handle, $0.baseAddress, $0.count) }
        precondition(done == 1, "libcrypto: SHA-256 update failed")
    }

    /// The 32-byte digest of everything hashed so far (the hasher itself is unchanged).
    public func finalize() -> [UInt8] {
        let copy = Context(copying: context)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let done = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(copy.handle, $0.baseAddress, &length) }
        precondition(done == 1 && length == 32, "libcrypto: SHA-256 final failed")
        return digest
    }

    /// The digest of `bytes`.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `text`'s UTF-8 bytes as 64 lowercase hex digits.
    public static func hexDigest(of text: String) -> String {
        let digits = Array("0123456789abcdef")
        var result = ""
        result.reserveCapacity(64)
        for byte in hash(text.utf8) {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return result
    }

    /// True when both byte strings are equal, in time that depends only on their length (OpenSSL's
    /// `CRYPTO_memcmp`), so comparing a secret reveals nothing of where a guess went wrong.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}
