extension Command {
    /// Parses one line given as bytes, without its `\n` (a trailing `\r` is allowed).
    ///
    /// The hot path (`loc:`) reads numbers straight from the bytes without allocating anything but
    /// the echoed timestamp text.
    public static func parse<Bytes: Collection>(_ line: Bytes) throws(WireError) -> Command where Bytes.Element == UInt8 {
        let result: Result<Command, WireError>? = line.withContiguousStorageIfAvailable { buffer in
            Result { () throws(WireError) -> Command in try CommandParser.parse(buffer) }
        }
        if let result { return try result.get() }
        let copy = Array(line)
        let copied = copy.withUnsafeBufferPointer { buffer in
            Result { () throws(WireError) -> Command in try CommandParser.parse(buffer) }
        }
        return try copied.get()
    }

    /// `label` when it can name a phone (`device:LABEL`, and the runner's page): 1-40 characters of printable
    /// text, no control characters (the caller trims spaces around it).
    public static func checkedDeviceLabel(_ label: String) throws(WireError) -> String {
        guard !label.isEmpty else { throw WireError(.badArgument, "device: a label is 1-\(Limits.deviceLabelLength) characters") }
        var count = 0
        for scalar in label.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                throw WireError(.badArgument, "device: a label must not contain control characters")
            }
            count += 1
        }
        guard count <= Limits.deviceLabelLength else {
            throw WireError(.badArgument, "device: a label is at most \(Limits.deviceLabelLength) characters")
        }
        return label
    }

    /// Parses one line given as text, without its `\n` (a trailing `\r` is allowed).
    public static func parse(_ line: String) throws(WireError) -> Command {
        try withUTF8Bytes(of: line) { buffer throws(WireError) in try CommandParser.parse(buffer) }
    }
}

/// The byte-level command grammar; see protocol.md, "Commands".
enum CommandParser {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(WireError) -> Command {
        var end = bytes.count
        if end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        if end > 0 && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end <= Command.Limits.lineLength else {
            throw WireError(.lineTooLong, "lines are at most \(Command.Limits.lineLength) bytes")
        }
        var ascii = true
        for index in 0..<end {
            let byte = bytes[index]
            if byte == 0 { throw WireError(.nulByte, "NUL byte at offset \(index)") }
            if byte >= 0x80 { ascii = false }
        }
        if !ascii && !UTF8Validation.isValid(bytes, 0..<end) {
            throw WireError(.badUTF8, "the line is not valid UTF-8")
        }
        let line = trimmed(bytes, 0..<end)
        // A blank line has no command word, hence no colon (servers skip blank lines before parsing).
        guard !line.isEmpty else { throw WireError(.missingColon, "a blank line is not a command") }
        guard let colonIndex = firstIndex(of: colon, in: bytes, line) else {
            throw WireError(.missingColon, "commands look like word:args (e.g. ping:)")
        }
        let word = line.lowerBound..<colonIndex
        let args = trimmed(bytes, (colonIndex + 1)..<line.upperBound)
        if word.count == 3 && bytes[word.lowerBound] == UInt8(ascii: "l") && bytes[word.lowerBound + 1] == UInt8(ascii: "o")
            && bytes[word.lowerBound + 2] == UInt8(ascii: "c") {
            return .location(try location(bytes, args))
        }
        let wordText = String(decoding: UnsafeBufferPointer(rebasing: bytes[word]), as: UTF8.self)
        switch wordText {
        case "iam": return try identify(bytes, args)
        case "stop":
            if args.isEmpty { return .stop(save: true) }
            if text(bytes, args) == "discard" { return .stop(save: false) }
            throw WireError(.badArgument, "stop: takes nothing (save) or discard")
        case "watch": return try watch(bytes, args)
        case "coach": return try coach(bytes, args)
        case "unwatch": return .unwatch(try target(bytes, args, word: wordText))
        case "msg": return .cheer(try cheer(bytes, args))
        case "ping": try noArguments(args, word: wordText); return .ping
        case "help": try noArguments(args, word: wordText); return .help
        case "quit": try noArguments(args, word: wordText); return .quit
        case "stats": try noArguments(args, word: wordText); return .stats
        case "runs": return try listRuns(bytes, args)
        case "run": return .showRun(id: try runID(bytes, args))
        case "badges": return .showBadges(name: try name(bytes, args, word: wordText))
        case "device": return try device(bytes, args)
        case "undevice":
            if args.count == 1 && bytes[args.lowerBound] == UInt8(ascii: "*") { return .removeDevice(token: nil) }
            guard !args.isEmpty, isValidKey(bytes, args) else {
                throw WireError(.badKey, "undevice: takes a device token (letters and digits) or *")
            }
            return .removeDevice(token: text(bytes, args))
        case "goal": return try goal(bytes, args)
        case "leaders": return try leaders(bytes, args)
        case "private", "privacy", "share", "unshare": return try privacy(wordText, bytes, args)
        case "replay": return try replay(bytes, args)
        case "course":
            // `off` is not a course's name: a course is named like a runner, and "off" stops following one.
            if text(bytes, args) == "off" { return .course(name: nil) }
            return .course(name: try name(bytes, args, word: wordText))
        default:
            let shown = wordText.count > 20 ? String(wordText.prefix(20)) + "…" : wordText
            throw WireError(.unknownCommand, "unknown command '\(shown)' (try help:)")
        }
    }

    // MARK: Commands

    static func location(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> LocationCommand {
        var fields = (0..<0, 0..<0, 0..<0, 0..<0)
        var count = 0
        var start = args.lowerBound
        var index = args.lowerBound
        while true {
            if index == args.upperBound || bytes[index] == comma {
                let field = trimmed(bytes, start..<index)
                switch count {
                case 0: fields.0 = field
                case 1: fields.1 = field
                case 2: fields.2 = field
                case 3: fields.3 = field
                default: throw WireError(.badArgument, "loc: takes exactly 4 fields LAT,LON,ACC,TS")
                }
                count += 1
                if index == args.upperBound { break }
                start = index + 1
            }
            index += 1
        }
        guard count == 4 else { throw WireError(.badArgument, "loc: takes exactly 4 fields LAT,LON,ACC,TS") }
        let latitude = try number(bytes, fields.0, "latitude")
        let longitude = try number(bytes, fields.1, "longitude")
        let accuracy = try number(bytes, fields.2, "accuracy")
        let timestamp = try number(bytes, fields.3, "timestamp")
        guard latitude.magnitude <= 90 else { throw WireError(.badCoordinate, "latitude must be within -90...90") }
        guard longitude.magnitude <= 180 else { throw WireError(.badCoordinate, "longitude must be within -180...180") }
        return LocationCommand(latitude: latitude, longitude: longitude, accuracy: accuracy, timestamp: timestamp,
                               timestampText: text(bytes, fields.3))
    }

    static func identify(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        let tokens = words(bytes, args)
        guard tokens.count <= 2 else { throw WireError(.badArgument, "iam: takes NAME or NAME KEY") }
        let name = try name(bytes, tokens.first ?? args, word: "iam")
        guard tokens.count == 2 else { return .identify(name: name, key: nil) }
        guard isValidKey(bytes, tokens[1]) else {
            throw WireError(.badKey, "a key is 1-\(Command.Limits.keyLength) letters and digits")
        }
        return .identify(name: name, key: text(bytes, tokens[1]))
    }

    static func target(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>, word: String) throws(WireError) -> WatchTarget {
        if args.count == 1 && bytes[args.lowerBound] == UInt8(ascii: "*") { return .everyone }
        return .runner(try name(bytes, args, word: word))
    }

    static func cheer(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> String {
        guard !args.isEmpty else { throw WireError(.badArgument, "msg: needs a text") }
        let message = text(bytes, args)
        var count = 0
        for scalar in message.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                throw WireError(.badArgument, "msg: text must not contain control characters")
            }
            count += 1
        }
        guard count <= Command.Limits.cheerLength else {
            throw WireError(.badArgument, "msg: text is at most \(Command.Limits.cheerLength) characters")
        }
        return message
    }

    /// `device:` (no label), `device:list`, or `device:LABEL`.
    static func device(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        guard !args.isEmpty else { return .addDevice(label: nil) }
        let label = text(bytes, args)
        if label == "list" { return .listDevices }
        return .addDevice(label: try Command.checkedDeviceLabel(label))
    }

    static func listRuns(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        let tokens = words(bytes, args)
        guard tokens.count <= 3 else { throw WireError(.badArgument, "runs: takes NAME [OFFSET [LIMIT]]") }
        let name = try name(bytes, tokens.first ?? args, word: "runs")
        var offset = 0
        var limit = Command.Limits.defaultRunsLimit
        if tokens.count >= 2 {
            offset = Int(try wholeNumber(bytes, tokens[1], in: 0...Int64(Int32.max), "runs: OFFSET"))
        }
        if tokens.count == 3 {
            limit = Int(try wholeNumber(bytes, tokens[2], in: 1...Int64(Command.Limits.maximumRunsLimit), "runs: LIMIT"))
        }
        return .listRuns(name: name, offset: offset, limit: limit)
    }

    static func runID(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Int64 {
        guard !args.isEmpty else { throw WireError(.badNumber, "run: needs a run id (a whole number)") }
        return try wholeNumber(bytes, args, in: 1...Int64.max, "a run id")
    }

    /// A whole number within `range`. Every number outside it is told the range, however far out: one past 64
    /// bits stays `bad_number` (§7: it overflows) but is not called "not a whole number"; `bad_argument` for the
    /// rest.
    static func wholeNumber(_ bytes: UnsafeBufferPointer<UInt8>, _ token: Range<Int>, in range: ClosedRange<Int64>,
                            _ what: String) throws(WireError) -> Int64 {
        let allowed = "\(what) must be between \(range.lowerBound) and \(range.upperBound)"
        guard let value = DecimalParser.integer(bytes, token) else {
            let digits = token.lowerBound + (bytes[token.lowerBound] == UInt8(ascii: "-") ? 1 : 0)
            let isWhole = digits < token.upperBound && (digits..<token.upperBound).allSatisfy { (bytes[$0] &- 48) < 10 }
            throw WireError(.badNumber, isWhole ? allowed : "\(what) is a whole number")
        }
        guard range.contains(value) else { throw WireError(.badArgument, allowed) }
        return value
    }

    static func noArguments(_ args: Range<Int>, word: String) throws(WireError) {
        guard args.isEmpty else { throw WireError(.badArgument, "\(word): takes no arguments") }
    }

    static func name(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, word: String) throws(WireError) -> String {
        guard isValidName(bytes, range) else {
            if isDots(bytes, range) { throw WireError(.badName, "a name cannot be . or .. (no page could show it)") }
            throw WireError(.badName, range.isEmpty ? "\(word): needs a name"
                : "a name is 1-\(Command.Limits.nameLength) of A-Z a-z 0-9 _ . -")
        }
        return text(bytes, range)
    }

    // MARK: Pieces

    static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ what: String) throws(WireError) -> Double {
        guard let value = DecimalParser.double(bytes, range) else {
            throw WireError(.badNumber, range.isEmpty ? "\(what) is missing" : "\(what) is not a plain decimal number")
        }
        return value
    }

    static func isValidName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty, range.count <= Command.Limits.nameLength else { return false }
        // A name is a URL path segment as it is (`/runners/NAME`): of its characters, only the segments `.` and
        // `..` mean something else there (a browser resolves them away before asking), so no page could show them.
        if isDots(bytes, range) { return false }
        for index in range {
            let byte = bytes[index]
            let ok = isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            if !ok { return false }
        }
        return true
    }

    /// `.` or `..`.
    static func isDots(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        (1...2).contains(range.count) && range.allSatisfy { bytes[$0] == UInt8(ascii: ".") }
    }

    static func isValidKey(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty, range.count <= Command.Limits.keyLength else { return false }
        for index in range where !isAlphanumeric(bytes[index]) { return false }
        return true
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte &- 48) < 10 || ((byte | 0x20) &- 97) < 26
    }

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper && (bytes[lower] == space || bytes[lower] == tab) { lower += 1 }
        while upper > lower && (bytes[upper - 1] == space || bytes[upper - 1] == tab) { upper -= 1 }
        return lower..<upper
    }

    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// Space-separated tokens (runs of spaces count as one separator).
    static func words(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [Range<Int>] {
        var tokens: [Range<Int>] = []
        var index = range.lowerBound
        while index < range.upperBound {
            while index < range.upperBound && (bytes[index] == space || bytes[index] == tab) { index += 1 }
            let start = index
            while index < range.upperBound && bytes[index] != space && bytes[index] != tab { index += 1 }
            if index > start { tokens.append(start..<index) }
        }
        return tokens
    }

    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
