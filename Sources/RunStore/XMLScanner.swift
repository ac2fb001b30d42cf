/// A small, forgiving XML tokenizer for the GPX importer: start and end tags with attributes, text, CDATA;
/// skips the declaration, processing instructions, comments and DOCTYPE. It checks that tags nest properly
/// but does not validate anything else.
struct XMLScanner {
    /// One piece of the document.
    enum Event {
        /// A start tag (an empty-element tag gives `.start` then `.end`).
        case start(name: String, attributes: [String: String])
        /// Character data (entities decoded).
        case text(String)
        /// An end tag.
        case end(name: String)
    }

    private let bytes: [UInt8]
    private var index = 0
    private var open: [String] = []
    private var pendingEnd: String?
    /// The 1-based line of the scanner's position, for messages.
    private(set) var line = 1

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// A qualified name without its namespace prefix.
    static func localName(_ name: String) -> String {
        guard let colon = name.lastIndex(of: ":") else { return name }
        return String(name[name.index(after: colon)...])
    }

    /// The next event; nil at the end of a well-nested document.
    mutating func next() throws(StoreError) -> Event? {
        if let name = pendingEnd {
            pendingEnd = nil
            return try close(name)
        }
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "<") { advance() }
                return .text(Self.decodeEntities(String(decoding: bytes[start..<index], as: UTF8.self)))
            }
            if has("<?") {
                try skip(past: "?>")
            } else if has("<!--") {
                try skip(past: "-->")
            } else if has("<![CDATA[") {
                index += 9
                let start = index
                try skip(past: "]]>")
                return .text(String(decoding: bytes[start..<(index - 3)], as: UTF8.self))
            } else if has("<!") {
                try skip(past: ">")
            } else if has("</") {
                index += 2
                let name = readName()
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw error("malformed end tag") }
                index += 1
                return try close(name)
            } else {
                return try startTag()
            }
        }
        guard open.isEmpty else { throw error("the document ends inside <\(open.last!)>") }
        return nil
    }

    private mutating func startTag() throws(StoreError) -> Event {
        index += 1
        let name = readName()
        guard !name.isEmpty else { throw error("malformed tag") }
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard index < bytes.count else { throw error("the document ends inside a tag") }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                open.append(name)
                return .start(name: name, attributes: attributes)
            }
            if has("/>") {
                index += 2
                open.append(name)
                pendingEnd = name
                return .start(name: name, attributes: attributes)
            }
            let attribute = readName()
            skipSpace()
            guard !attribute.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw error("malformed attribute in <\(name)>")
            }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw error("unquoted attribute value in <\(name)>")
            }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote { advance() }
            guard index < bytes.count else { throw error("unterminated attribute value in <\(name)>") }
            attributes[Self.localName(attribute)] = Self.decodeEntities(String(decoding: bytes[start..<index], as: UTF8.self))
            index += 1
        }
    }

    private mutating func close(_ name: String) throws(StoreError) -> Event {
        guard let last = open.popLast(), last == name else {
            throw error("</\(name)> does not close the open element")
        }
        return .end(name: name)
    }

    private func has(_ prefix: String) -> Bool {
        let utf8 = prefix.utf8
        guard index + utf8.count <= bytes.count else { return false }
        return bytes[index..<(index + utf8.count)].elementsEqual(utf8)
    }

    private mutating func skip(past terminator: String) throws(StoreError) {
        while index < bytes.count, !has(terminator) { advance() }
        guard index < bytes.count else { throw error("unterminated \(terminator) construct") }
        index += terminator.utf8.count
    }

    private mutating func advance() {
        if bytes[index] == UInt8(ascii: "\n") { line += 1 }
        index += 1
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { advance() }
    }

    private mutating func readName() -> String {
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "=")].contains(byte) { break }
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func error(_ message: String) -> StoreError {
        StoreError.invalidInput("line \(line): not well-formed XML: \(message)")
    }

    /// Replaces the predefined entities and numeric character references.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";"),
                  rest.distance(from: ampersand, to: semicolon) <= 10 else {
                result += "&"
                rest = rest[rest.index(after: ampersand)...]
                continue
            }
            let entity = rest[rest.index(after: ampersand)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let scalar: Unicode.Scalar? = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init) : nil
                if let scalar { result.unicodeScalars.append(scalar) } else { result += "&\(entity);" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
