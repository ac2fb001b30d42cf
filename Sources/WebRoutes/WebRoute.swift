import HTTP
import WebAssets
import Wire

/// What a request to the HTTP port asks for, every URL of protocol.md Part 2 decoded and validated,
/// so the server's handlers get typed values and never look at a path or a query themselves.
public enum WebRoute: Sendable, Hashable {
    /// A page or one of its files, served from memory (`GET /`, `/runners/NAME`, `/assets/app.js`, …).
    case page(WebAsset)
    /// `GET /events?watch=…` or `?coach=…`: a Server-Sent Events stream.
    case events(EventStreamTarget)
    /// `POST /runners/NAME/cheers`: the text already checked by the rules of `msg:`.
    case cheer(runner: String, text: String)
    /// `GET /api/overview`.
    case overview
    /// `GET /api/runners/NAME`.
    case runner(String)
    /// `GET /api/runs/ID`.
    case run(Int64)
    /// `GET /api/runners/NAME/runs?offset=&limit=`, defaults applied.
    case runs(runner: String, offset: Int, limit: Int)
    /// `GET /api/runners/NAME/badges`.
    case badgeBoard(runner: String)
    /// `GET /api/courses/NAME`: a race course, its points and the runners on it now.
    case course(String)
    /// `GET /api/badges`.
    case badgeCatalogue
    /// `GET /api/map`: what the pages draw the track on (Leaflet there or not, the tile server, its attribution).
    case mapSettings
    /// `GET /assets/leaflet/NAME`: one of Leaflet's files (``LeafletFiles/names``), if the server has Leaflet.
    case leaflet(String)
    /// `GET /runs/ID.gpx`, `.geojson`, `.svg`.
    case export(run: Int64, format: ExportFormat)
    /// `GET /metrics`.
    case metrics
    /// `GET /healthz`.
    case health
    /// `GET` or `POST /osmand`: one position from an app speaking the OsmAnd protocol (Traccar Client, OsmAnd).
    case osmAnd
    /// `POST /owntracks`: one message from OwnTracks in HTTP mode.
    case ownTracks
    /// `POST /runners/NAME/devices` or `/stop`: what the runner's page does with the runner's key.
    case runnerAction(runner: String, action: RunnerAction)
    /// `GET /runners/NAME/devices`: the runner's phones, for the runner's page (proved by the runner's key).
    case deviceList(runner: String)
}

/// What the runner's own page may do, proved by the runner's key.
public enum RunnerAction: String, Sendable, Hashable {
    /// Make a device token for a phone app.
    case devices
    /// End the live run, saved.
    case stop
    /// Follow a course (or none), as `course:` does.
    case course
}

/// Who an event stream follows: like the line protocol's `watch:` and `coach:`.
public struct EventStreamTarget: Sendable, Hashable {
    /// The runner followed, or `.everyone` for `*`.
    public var target: WatchTarget
    /// True for `coach=` (run, badge and end events only).
    public var isCoach: Bool

    /// Creates a target.
    public init(target: WatchTarget, isCoach: Bool) {
        self.target = target
        self.isCoach = isCoach
    }
}

/// The three export formats, with what the download needs.
public enum ExportFormat: String, Sendable, Hashable, CaseIterable {
    /// GPX 1.1.
    case gpx
    /// GeoJSON (RFC 7946).
    case geojson
    /// A standalone SVG picture.
    case svg
    /// Garmin Training Center XML v2 (one activity, a lap per km).
    case tcx

    /// The `Content-Type`.
    public var contentType: String {
        switch self {
        case .gpx: return "application/gpx+xml"
        case .geojson: return "application/geo+json"
        case .svg: return "image/svg+xml"
        case .tcx: return "application/vnd.garmin.tcx+xml"
        }
    }

    /// The `Content-Disposition` value: `attachment; filename="moonrunner-run-ID.EXT"`.
    public func contentDisposition(run: Int64) -> String {
        "attachment; filename=\"moonrunner-run-\(run).\(rawValue)\""
    }
}

/// Why a request has no route: the answer to send (the connection may stay open: the request was
/// well-formed HTTP).
public struct WebRouteError: Error, Sendable, Hashable {
    /// 400, 404, 405, 413, 415, 422 or 501.
    public var status: HTTPStatus
    /// The one-line reason for the text/plain body.
    public var reason: String
    /// For 405: the methods the URL takes.
    public var allowed: [String]

    /// Creates an error.
    public init(_ status: HTTPStatus, _ reason: String, allowed: [String] = []) {
        self.status = status
        self.reason = reason
        self.allowed = allowed
    }

    /// The response to send.
    public var response: HTTPResponse {
        var response = HTTPResponse.text(status, reason)
        if !allowed.isEmpty { response.headers.add("Allow", allowed.joined(separator: ", ")) }
        return response
    }
}

extension WebRoute {
    /// True for a phone app's position report (OsmAnd, Traccar Client, OwnTracks): what the server refuses
    /// for a while, the app keeping it, when it cannot take more fixes.
    public var isPositionReport: Bool {
        switch self {
        case .osmAnd, .ownTracks: true
        default: false
        }
    }
}
