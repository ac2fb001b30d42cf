/// Strict UTF-8 checking (no overlong forms, no surrogates, nothing above U+10FFFF).
///
/// `String(decoding:)` would silently repair bad bytes; the protocol refuses them instead so that
/// what the server stores and relays is exactly what the client sent.
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        let end = range.upperBound
        func continuation(_ offset: Int) -> Bool {
            index + offset < end && bytes[index + offset] & 0xC0 == 0x80
        }
        while index < end {
            let lead = bytes[index]
            switch lead {
            case 0x00...0x7F:
                index += 1
            case 0xC2...0xDF:
                guard continuation(1) else { return false }
                index += 2
            case 0xE0...0xEF:
                guard continuation(1), continuation(2) else { return false }
                let second = bytes[index + 1]
                if lead == 0xE0 && second < 0xA0 { return false }  // overlong
                if lead == 0xED && second > 0x9F { return false }  // surrogates
                index += 3
            case 0xF0...0xF4:
                guard continuation(1), continuation(2), continuation(3) else { return false }
                let second = bytes[index + 1]
                if lead == 0xF0 && second < 0x90 { return false }  // overlong
                if lead == 0xF4 && second > 0x8F { return false }  // above U+10FFFF
                index += 4
            default:
                return false
            }
        }
        return true
    }

    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isValid(bytes, 0..<bytes.count)
    }
}
