import Broadcaster
import ToolSupport
import WebAssets

extension Options {
    /// `--leaflet DIR`, `--tiles URL|off`, `--tiles-attribution TEXT`, `--tiles-private on|off`: the street map
    /// under the pages' tracks. Leaflet is read here, once (Debian's `libjs-leaflet` by default); without it the
    /// pages draw SVG, and `notice` says how to get the map.
    mutating func streetMap() throws(UsageError) -> (configuration: StreetMapConfiguration, notice: String?) {
        var map = StreetMapConfiguration()
        let folder = string("leaflet") ?? StreetMapConfiguration.debianLeafletFolder
        if let tiles = string("tiles") {
            if tiles == "off" {
                map.tiles = nil
            } else {
                if let problem = StreetMapConfiguration.problem(withTiles: tiles) {
                    throw UsageError(description: "--tiles: \(problem)")
                }
                map.tiles = tiles
                // Another tile server's attribution is the operator's to give; OpenStreetMap's fits only its own.
                if tiles != StreetMapConfiguration.openStreetMapTiles {
                    map.attribution = "Map tiles: \(hostName(of: tiles))"
                    map.attributionURL = nil
                }
            }
        }
        if let attribution = string("tiles-attribution") {
            guard !attribution.isEmpty, attribution.count <= 300 else {
                throw UsageError(description: "--tiles-attribution: 1 to 300 characters")
            }
            map.attribution = attribution
            map.attributionURL = nil
        }
        if let text = string("tiles-private") {
            guard text == "on" || text == "off" else { throw UsageError(description: "--tiles-private: on or off, not \(text)") }
            map.tilesForPrivateRunners = text == "on"
        }
        guard map.tiles != nil else { return (map, nil) }
        map.leaflet = LeafletFiles(folder: folder)
        guard map.leaflet == nil else { return (map, nil) }
        let how = folder == StreetMapConfiguration.debianLeafletFolder
            ? "install Debian's libjs-leaflet (apt-get install libjs-leaflet) or give --leaflet DIR"
            : "--leaflet \(folder) has no leaflet.js and leaflet.css"
        return (map, "street map: no Leaflet in \(folder): the pages draw tracks without a street map; for one, \(how)")
    }

    private func hostName(of template: String) -> String {
        let afterScheme = template.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first
        return afterScheme.map(String.init) ?? template
    }
}
