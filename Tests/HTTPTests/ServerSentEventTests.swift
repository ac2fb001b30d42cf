import Testing
@testable import HTTP

@Suite struct ServerSentEventTests {
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func fieldsComeInOrderWithOneDataLinePerLine() {
        let event = ServerSentEvent(id: "7", event: "msg", data: "one\ntwo\r\nthree\rfour", retry: 3000)
        #expect(text(event.encoded) == "id: 7\nevent: msg\nretry: 3000\ndata: one\ndata: two\ndata: three\ndata: four\n\n")
        #expect(text(ServerSentEvent(data: "").encoded) == "data: \n\n")
        #expect(text(ServerSentEvent(data: "end\n").encoded) == "data: end\ndata: \n\n")
    }

    @Test func idsAndNamesCannotBreakTheFraming() {
        let event = ServerSentEvent(id: "1\n\u{0}2", event: "a\r\nb", data: "x")
        #expect(text(event.encoded) == "id: 12\nevent: ab\ndata: x\n\n")
    }

    @Test func commentsAndRetryDispatchNothing() {
        var bytes: [UInt8] = []
        ServerSentEvent.appendRetry(milliseconds: 5000, to: &bytes)
        ServerSentEvent.appendComment("heartbeat", to: &bytes)
        ServerSentEvent.appendComment(to: &bytes)
        #expect(text(bytes) == "retry: 5000\n\n: heartbeat\n\n:\n\n")
        var decoder = ServerSentEventDecoder()
        #expect(decoder.feed(bytes).isEmpty)
        #expect(decoder.retry == 5000)
        #expect(decoder.commentCount == 2)
    }

    @Test func theDecoderReadsWhatTheEncoderWritesSplitAnywhere() {
        var stream: [UInt8] = []
        let events = [
            ServerSentEvent(id: "1", event: "run", data: #"{"kind":"run","runner":"ann"}"#),
            ServerSentEvent(id: "2", event: "msg", data: "line one\nline two"),
            ServerSentEvent(event: "pace", data: "no id: keeps 2"),
            ServerSentEvent(id: "", data: "id reset"),
        ]
        for (index, event) in events.enumerated() {
            event.append(to: &stream)
            if index == 1 { ServerSentEvent.appendComment("hb", to: &stream) }
        }
        let expected = [
            ServerSentEventDecoder.Message(event: "run", data: #"{"kind":"run","runner":"ann"}"#, lastEventID: "1"),
            ServerSentEventDecoder.Message(event: "msg", data: "line one\nline two", lastEventID: "2"),
            ServerSentEventDecoder.Message(event: "pace", data: "no id: keeps 2", lastEventID: "2"),
            ServerSentEventDecoder.Message(event: "message", data: "id reset", lastEventID: ""),
        ]
        for size in [1, 3, stream.count] {
            var decoder = ServerSentEventDecoder()
            var messages: [ServerSentEventDecoder.Message] = []
            var offset = 0
            while offset < stream.count {
                messages += decoder.feed(stream[offset..<min(stream.count, offset + size)])
                offset += size
            }
            #expect(messages == expected, "pieces of \(size)")
            #expect(decoder.commentCount == 1)
        }
    }

    @Test func theDecoderFollowsTheStandardOnOddInput() {
        var decoder = ServerSentEventDecoder()
        let messages = decoder.feed(Array("\u{FEFF}data:no space\r\nevent\r\ndata\r\n\r\nid: 9\u{0}\ndata: x\n\nretry: 1s\ndata: y".utf8))
        #expect(messages == [
            ServerSentEventDecoder.Message(event: "message", data: "no space\n", lastEventID: ""),
            ServerSentEventDecoder.Message(event: "message", data: "x", lastEventID: ""),
        ])
        #expect(decoder.retry == nil)
    }

    @Test func reconnectingClientsSendLastEventID() throws {
        var decoder = ServerSentEventDecoder()
        _ = decoder.feed(ServerSentEvent(id: "41", event: "pace", data: "{}").encoded)
        let reconnect = wire("GET /events?watch=ann HTTP/1.1", "Host: h", "Accept: text/event-stream",
                             "Last-Event-ID: \(decoder.lastEventID)", "", "")
        #expect(onlyRequest(reconnect)?.lastEventID == "41")
    }
}
