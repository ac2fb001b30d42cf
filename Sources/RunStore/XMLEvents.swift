import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element start as a reader of GPX or TCX sees it: namespace-resolved, with its line.
struct XMLElementStart {
    /// The local name (`trkpt`, whatever the prefix).
    let name: String
    /// The namespace URI, empty for none.
    let namespace: String
    /// Attributes by name as written (unprefixed ones, the only kind GPX and TCX use, by local name).
    let attributes: [String: String]
    /// The line the start tag ends on.
    let line: Int
}

/// What a GPX or TCX reader does with the parser's events. The text of an element is handed over at its end
/// (its direct character data and CDATA, trimmed), which is all these formats need.
protocol XMLEventHandler {
    /// An element starts.
    mutating func start(_ element: XMLElementStart) throws(StoreError)
    /// An element ends; `text` is its character data, trimmed.
    mutating func end(_ name: String, namespace: String, text: String, line: Int) throws(StoreError)
}

/// Drives an ``XMLEventHandler`` with FoundationXML's `XMLParser` (libxml2): namespaces, entities, CDATA,
/// byte-order marks and declared encodings are the parser's business, not ours.
enum XMLEvents {
    /// Parses `data`, calling `handler`; the first error (the handler's, or malformed XML) ends the parse.
    static func parse<Handler: XMLEventHandler>(_ data: Data, into handler: inout Handler) throws(StoreError) {
        if let encoding = fourByteEncoding(of: data) {
            // Found by the fuzzer: libxml2 guesses UCS-4 (or EBCDIC) from such a start and FoundationXML's
            // XMLParser then crashes in xmlParseChunk. Nobody writes GPX in these: refuse them first.
            throw StoreError.invalidInput("line 1: the file starts as \(encoding) text does; "
                + "GPX and TCX files are read in UTF-8, UTF-16, ASCII, ISO-8859 or Windows code pages")
        }
        if let line = emptyProcessingInstruction(in: data) {
            // Found by the fuzzer: FoundationXML's XMLParser reads a processing instruction's missing data as a C
            // string and crashes (strlen of NULL) on `<?target?>`. No GPX or TCX file has one: refused first.
            throw StoreError.invalidInput("line \(line): a processing instruction without data (<?target?>)")
        }
        if let encoding = declaredEncoding(in: data), !isReadable(encoding: encoding) {
            throw StoreError.invalidInput("line 1: the file declares encoding \"\(encoding)\"; "
                + "GPX and TCX files are read in UTF-8, UTF-16, ASCII, ISO-8859 or Windows code pages")
        }
        // Fed from a stream, libxml2 gets the document in chunks: given whole, anything over its 10 MB lookup
        // limit is refused as "huge input" (a 12-hour run at 1 Hz is more).
        let parser = XMLParser(stream: InputStream(data: data))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        let delegate = Delegate(handler: handler)
        parser.delegate = delegate
        let finished = parser.parse()
        if let error = delegate.failure { throw error }
        // libxml2 recovers from some errors and parse() then still says yes: any reported error fails.
        guard finished, parser.parserError == nil else {
            let code = (parser.parserError as NSError?)?.code ?? 0
            throw StoreError.invalidInput("line \(parser.lineNumber): not well-formed XML (\(Self.describe(code: code)))")
        }
        handler = delegate.handler
    }

    /// The line of the first processing instruction with no data (`<?name?>`, `<?name ?>`), if any. NULs are
    /// skipped so UTF-16's ASCII is seen too; a `<?` inside a comment or CDATA counts as well (refusing such a
    /// file is the safe side).
    static func emptyProcessingInstruction(in data: Data) -> Int? {
        let bytes = Array(data.lazy.filter { $0 != 0 })
        var line = 1
        var index = 0
        while index + 1 < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") { line += 1 }
            guard byte == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "?") else {
                index += 1
                continue
            }
            var cursor = index + 2
            let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            while cursor < bytes.count, !isSpace(bytes[cursor]), bytes[cursor] != UInt8(ascii: "?") { cursor += 1 }
            while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
            if cursor + 1 < bytes.count, bytes[cursor] == UInt8(ascii: "?"), bytes[cursor + 1] == UInt8(ascii: ">") {
                return line
            }
            index += 2
        }
        return nil
    }

    /// The encoding libxml2 would guess from the first four bytes when it is one it cannot read here (UCS-4 in
    /// any byte order, with or without a byte-order mark, or EBCDIC); nil otherwise.
    static func fourByteEncoding(of data: Data) -> String? {
        let start = Array(data.prefix(4))
        guard start.count == 4 else { return nil }
        let ucs4: [[UInt8]] = [[0, 0, 0, 0x3C], [0x3C, 0, 0, 0], [0, 0, 0x3C, 0], [0, 0x3C, 0, 0],
                               [0, 0, 0xFE, 0xFF], [0xFF, 0xFE, 0, 0], [0, 0, 0xFF, 0xFE], [0xFE, 0xFF, 0, 0]]
        if ucs4.contains(start) { return "UCS-4" }
        if start == [0x4C, 0x6F, 0xA7, 0x94] { return "EBCDIC" }
        return nil
    }

    /// The `encoding` named by the XML declaration at the start of `data`, if it names one. The probe is
    /// lenient where libxml2 is: UTF-8 or UTF-16 byte-order marks and NULs (UTF-16's ASCII) are skipped,
    /// and a declaration need not be closed. A value that cannot be read is returned as written (so refused).
    static func declaredEncoding(in data: Data) -> String? {
        var bytes = data.prefix(512).filter { $0 != 0 }
        for mark in [[0xEF, 0xBB, 0xBF], [0xFF, 0xFE], [0xFE, 0xFF]] as [[UInt8]] where bytes.starts(with: mark) {
            bytes = Data(bytes.dropFirst(mark.count))
            break
        }
        guard bytes.starts(with: Array("<?xml".utf8)) else { return nil }
        let declaration = String(decoding: bytes.prefix { $0 != UInt8(ascii: ">") }, as: UTF8.self)
        guard let key = declaration.range(of: "encoding") else { return nil }
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        let rest = declaration[key.upperBound...].drop(while: isSpace)
        guard rest.first == "=" else { return String(rest.prefix(40)) }
        let value = rest.dropFirst().drop(while: isSpace)
        guard let quote = value.first, quote == "\"" || quote == "'" else { return String(value.prefix(40)) }
        return String(value.dropFirst().prefix { $0 != quote }.prefix(40))
    }

    /// Whether libxml2 reads `encoding` safely. Stateful and multi-byte code pages go through iconv, and
    /// libxml2 2.9 crashes on some broken UTF-7 or ISO-2022 input (found by the fuzzer): no watch exports
    /// them, so they are refused rather than parsed.
    static func isReadable(encoding: String) -> Bool {
        let name = encoding.uppercased().replacingOccurrences(of: "_", with: "-")
        if ["UTF-8", "UTF8", "US-ASCII", "ASCII", "UTF-16", "UTF-16LE", "UTF-16BE", "UCS-2", "LATIN1", "ISO-LATIN-1",
            "KOI8-R", "KOI8-U"].contains(name) { return true }
        for prefix in ["ISO-8859-", "WINDOWS-125", "CP125"] where name.hasPrefix(prefix) {
            return name.dropFirst(prefix.count).allSatisfy(\.isNumber) && name.count > prefix.count
        }
        return false
    }

    /// Words for the libxml2 error codes (`xmlParserErrors`) that broken GPX and TCX files give.
    static func describe(code: Int) -> String {
        switch code {
        case 4: "the document is empty"
        case 5: "the document ends early, or has more after its root element"
        case 9: "a character XML does not allow"
        case 26: "an undeclared entity"
        case 39, 41: "an attribute value without quotes"
        case 73: "'>' expected"
        case 76: "an end tag does not match its start tag"
        case 77: "an element is not closed"
        default: "libxml2 error \(code)"
        }
    }

    /// The parser's delegate: keeps the handler and the text of the open elements.
    private final class Delegate<Handler: XMLEventHandler>: NSObject, XMLParserDelegate {
        var handler: Handler
        var failure: StoreError?
        /// Character data of each open element (only the innermost grows).
        private var texts: [String] = []

        init(handler: Handler) {
            self.handler = handler
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            texts.append("")
            guard failure == nil else { return }
            let element = XMLElementStart(name: elementName, namespace: namespaceURI ?? "", attributes: attributes,
                                          line: parser.lineNumber)
            do throws(StoreError) {
                try handler.start(element)
            } catch {
                fail(parser, error)
            }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?) {
            let text = Self.trimmed(texts.popLast() ?? "")
            guard failure == nil else { return }
            do throws(StoreError) {
                try handler.end(elementName, namespace: namespaceURI ?? "", text: text, line: parser.lineNumber)
            } catch {
                fail(parser, error)
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            guard failure == nil else { return }
            let code = (parseError as NSError).code
            fail(parser, StoreError.invalidInput("line \(parser.lineNumber): not well-formed XML "
                + "(\(XMLEvents.describe(code: code)))"))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            // The indentation between elements is most of the character data, and leading white space is
            // trimmed anyway: it is not collected (so the containers' text never grows with it).
            guard !texts.isEmpty, !(texts[texts.count - 1].isEmpty && Self.isBlank(string)) else { return }
            texts[texts.count - 1] += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            if !texts.isEmpty { texts[texts.count - 1] += String(decoding: CDATABlock, as: UTF8.self) }
        }

        private func fail(_ parser: XMLParser, _ error: StoreError) {
            failure = error
            parser.abortParsing()
        }

        /// XML white space: space, tab, line feed, carriage return.
        private static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        private static func isBlank(_ text: String) -> Bool { text.utf8.allSatisfy(isSpace) }

        /// `text` without XML white space at either end, on the UTF-8 bytes (Foundation's trimming goes
        /// through UTF-16, and was the largest cost of reading a file).
        static func trimmed(_ text: String) -> String {
            let bytes = text.utf8
            guard let first = bytes.firstIndex(where: { !isSpace($0) }),
                  let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
            // The end is just after a non-space byte: the end of the text or a space, so a scalar boundary.
            let end = bytes.index(after: last)
            if first == bytes.startIndex, end == bytes.endIndex { return text }
            return String(decoding: bytes[first..<end], as: UTF8.self)
        }
    }
}
