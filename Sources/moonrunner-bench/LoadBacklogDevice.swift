import Reactor
import Wire

/// A phone that was offline from the start of a run and now sends its queue: `size` positions 4 s apart along
/// a path north at 3 m/s, the oldest `(size - 1) × 4` s old, the newest current, on one keep-alive connection.
/// ``Mode/single``: one OsmAnd position per request, oldest first, each the next after its answer (as Traccar
/// Client empties its queue); ``Mode/batch``: the whole queue in one `POST /osmand` JSON `location` array.
/// Any answer but 200 ends its queue (counted, the first one kept).
final class LoadBacklogDevice: LoadPeer {
    /// How the queue goes out.
    enum Mode {
        case single
        case batch
    }

    /// Seconds between the queue's positions.
    static let interval = 4

    let token: String
    let mode: Mode
    /// Unix seconds of each queued position, oldest first.
    private let stamps: [Int64]
    private let latitude: Double
    /// Positions in the requests sent, and in those answered 200.
    private(set) var positionsSent = 0
    private(set) var positionsAnswered = 0
    /// Bytes of the batch request's body (batch mode).
    private(set) var batchBodyBytes = 0
    /// True once its queue is out and answered (or an answer was not 200).
    private(set) var isFinished = false
    private var sentAt: Int64 = 0
    private var inFlight = 0
    private var status: Substring = ""
    private var inHead = false
    private var bodyLeft = 0

    init(socket: StreamSocket, driver: LoadDriver, token: String, mode: Mode, size: Int,
         newest: Int64, latitude: Double) {
        self.token = token
        self.mode = mode
        stamps = (0..<size).map { newest - Int64((size - 1 - $0) * Self.interval) }
        self.latitude = latitude
        super.init(socket: socket, driver: driver)
        state = .ready
    }

    /// Sends the first request (the whole queue in batch mode).
    func start() {
        mode == .single ? sendNext() : sendBatch()
    }

    private func latitude(at index: Int) -> Double {
        latitude + Double(index * Self.interval) * 3 / 111_320
    }

    private func sendNext() {
        let index = positionsSent
        var request = Array("GET /osmand?id=\(token)&timestamp=\(stamps[index])&lat=".utf8)
        NumberFormat.append(latitude(at: index), decimals: 7, to: &request)
        request.append(contentsOf: "&lon=11.0000000&accuracy=5 HTTP/1.1\r\nHost: load\r\n\r\n".utf8)
        transmit(request, positions: 1)
    }

    /// `{"location":[{"timestamp":ISO,"coords":{"latitude","longitude","accuracy"}},…],"device_id":T}`.
    private func sendBatch() {
        var body = Array(#"{"location":["#.utf8)
        for index in stamps.indices {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"timestamp":""#.utf8)
            body.append(contentsOf: ISODate.string(unixSeconds: Double(stamps[index])).utf8)
            body.append(contentsOf: #"","coords":{"latitude":"#.utf8)
            NumberFormat.append(latitude(at: index), decimals: 7, to: &body)
            body.append(contentsOf: #","longitude":11.0000000,"accuracy":5}}"#.utf8)
        }
        body.append(contentsOf: #"],"device_id":""#.utf8)
        body.append(contentsOf: token.utf8)
        body.append(contentsOf: "\"}".utf8)
        batchBodyBytes = body.count
        let head = "POST /osmand HTTP/1.1\r\nHost: load\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        transmit(Array(head.utf8) + body, positions: stamps.count)
    }

    private func transmit(_ request: [UInt8], positions: Int) {
        inFlight = positions
        positionsSent += positions
        sentAt = LoadClock.wallMicroseconds()
        inHead = false
        send(request)
    }

    override func received(_ line: UnsafeBufferPointer<UInt8>, at now: Int64) {
        // The answer: a status line, headers up to a blank line, then Content-Length bytes of body (the
        // server's bodies end in a newline, so they come as whole lines).
        if bodyLeft > 0 {
            bodyLeft -= line.count + 1
            if bodyLeft <= 0 { answered(at: now) }
        } else if !inHead {
            guard line.starts(with: "HTTP/1.".utf8) else { return driver.noteProtocolError("backlog: not an HTTP answer") }
            status = Substring(String(decoding: line, as: UTF8.self).dropFirst(9))
            inHead = true
        } else if line.isEmpty {
            inHead = false
            if bodyLeft == 0 { answered(at: now) }
        } else {
            let header = String(decoding: line, as: UTF8.self)
            if header.lowercased().hasPrefix("content-length:"),
               let length = Int(header.dropFirst(15).trimmingCharacters(in: .whitespaces)) {
                bodyLeft = length
            }
        }
    }

    private func answered(at now: Int64) {
        bodyLeft = 0
        driver.noteBacklogAnswer(latency: now - sentAt, status: String(status))
        if status.hasPrefix("200") {
            positionsAnswered += inFlight
        } else {
            isFinished = true
        }
        inFlight = 0
        if !isFinished && mode == .single && positionsSent < stamps.count {
            sendNext()
        } else {
            isFinished = true
            close(reason: "done", expected: true)
        }
    }
}
