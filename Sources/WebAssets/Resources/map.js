// MoonRunner Live: the track on a street map. Leaflet comes from our own server (/assets/leaflet/, Debian's
// libjs-leaflet) and tiles from the server that /api/map names; without either, or for a private runner's page
// unless the operator allows tiles there, the track is drawn as before: SVG on a plain background.
"use strict";
const MRMap = (() => {
  let settingsPromise = null;
  // What the server offers: {leaflet, tiles, attribution, attribution_url, tiles_private}.
  function settings() {
    if (!settingsPromise) {
      settingsPromise = fetch("/api/map", { headers: { Accept: "application/json" } })
        .then((response) => (response.ok ? response.json() : { leaflet: false }))
        .catch(() => ({ leaflet: false }));
    }
    return settingsPromise;
  }

  let leafletPromise = null;
  function loadLeaflet() {
    if (window.L) return Promise.resolve(window.L);
    if (!leafletPromise) {
      leafletPromise = new Promise((resolve, reject) => {
        document.head.appendChild(MR.element("link", { rel: "stylesheet", href: "/assets/leaflet/leaflet.css" }));
        const script = MR.element("script", { src: "/assets/leaflet/leaflet.js" });
        script.onload = () => (window.L ? resolve(window.L) : reject(new Error("no Leaflet")));
        script.onerror = () => reject(new Error("Leaflet did not load"));
        document.head.appendChild(script);
      });
    }
    return leafletPromise;
  }

  // --- The SVG view (no street map): MR.drawTrack as before. ---
  function svgView(box, svg, note) {
    let projection = MR.project([], 800, 500, 28), replay = null, sos = null;
    // The SOS ring, drawn again after each drawing of the track (which starts from an empty picture). Without a
    // track to place it by (a privacy zone withholds the positions around it), it is the picture's middle.
    function drawSOS() {
      svg.querySelectorAll(".sos-marker").forEach((node) => node.remove());
      if (!sos) return;
      const [x, y] = projection.xy(sos.lat, sos.lon);
      svg.appendChild(MR.svgNode("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 11, class: "sos-marker" }));
    }
    return {
      kind: "svg",
      note,
      draw(points, pins, options = {}) {
        projection = MR.drawTrack(svg, points, pins, options);
        svg.classList.toggle("stale", Boolean(options.stale));
        drawSOS();
        // A saved run's replay marker waits, hidden, until the replay places it.
        replay = null;
        if (options.replay) {
          replay = MR.svgNode("circle", { id: "replay-marker", r: 7, class: "replay-marker", visibility: "hidden" });
          svg.appendChild(replay);
        }
      },
      placeReplay(lat, lon, time) {
        if (!projection || !replay) return;
        const [x, y] = projection.xy(lat, lon);
        replay.setAttribute("cx", x.toFixed(1));
        replay.setAttribute("cy", y.toFixed(1));
        replay.setAttribute("visibility", "visible");
        replay.dataset.time = time.toFixed(1);
      },
      drawRunners() {},
      // The course page: the course, its points and the runners on it ([{runner, lat, lon}]).
      drawCourse(course, runners) {
        projection = MR.drawTrack(svg, [], [], { course, runners });
      },
      // An SOS's position: a red ring where the track's projection puts it, kept over every later drawing.
      placeSOS(lat, lon) {
        sos = { lat, lon };
        drawSOS();
      },
    };
  }

  // --- The street map view. ---
  function streetView(L, box, svg, config, tiles, note) {
    const container = MR.element("div", { id: "street-map", class: "street-map", role: "application",
      "aria-label": "Street map of the run" });
    svg.replaceWith(container);
    const map = L.map(container, { zoomSnap: 0.25, worldCopyJump: true });
    map.attributionControl.setPrefix("");
    L.control.scale({ metric: true, imperial: true }).addTo(map);
    if (tiles) {
      const attribution = config.attribution_url
        ? `<a href="${MR.escapeText(config.attribution_url)}" target="_blank" rel="noopener">${MR.escapeText(config.attribution || "")}</a>`
        : MR.escapeText(config.attribution || "");
      const layer = L.tileLayer(config.tiles, { attribution, maxZoom: 19, detectRetina: false });
      // Tiles that cannot be fetched (offline, blocked): the track, marker and pins stay on the plain background.
      layer.on("tileerror", () => box.classList.add("tiles-failed"));
      layer.addTo(map);
    } else {
      box.classList.add("no-tiles");
    }
    // Added first, so drawn first: a course lies under the track.
    const courseLayer = L.layerGroup().addTo(map);
    const trackLayer = L.layerGroup().addTo(map), pinLayer = L.layerGroup().addTo(map), labelLayer = L.layerGroup().addTo(map);
    let markerLayer = null, replayMarker = null, sosMarker = null, labelled = [];
    let drawnCourse = null;
    // The view follows the run until the viewer pans or zooms by hand.
    let viewerMoved = false, hasView = false;
    const moved = () => { viewerMoved = true; };
    map.on("dragstart", moved);
    container.addEventListener("wheel", moved, { passive: true });
    container.addEventListener("dblclick", moved);
    container.addEventListener("touchstart", (event) => { if (event.touches.length > 1) moved(); }, { passive: true });
    container.querySelectorAll(".leaflet-control-zoom a").forEach((a) => a.addEventListener("click", moved));

    function relabel() {
      labelLayer.clearLayers();
      const size = map.getSize();
      const items = labelled.map((pin) => {
        const p = map.latLngToContainerPoint([pin.lat, pin.lon]);
        return { x: p.x, y: p.y, text: pin.text };
      });
      MR.placeLabels(items, size.x, size.y).forEach((place, index) => {
        const pin = labelled[index];
        pin.marker.unbindTooltip();
        if (!place) {
          pin.marker.bindTooltip(pin.text);  // no free place: the name shows on hover or tap
          return;
        }
        const icon = L.divIcon({ className: `pin-label tier-${pin.tier || "earned"}`, html: MR.escapeText(pin.text),
          iconSize: [place.w, place.h], iconAnchor: [-place.dx, -place.dy] });
        L.marker([pin.lat, pin.lon], { icon, interactive: false, keyboard: false }).addTo(labelLayer);
      });
    }
    map.on("zoomend", relabel);

    function follow(bounds, current) {
      if (!bounds.isValid()) return;
      if (!hasView) {
        map.fitBounds(bounds, { padding: [24, 24], maxZoom: 16, animate: false });
        hasView = true;
      } else if (!viewerMoved) {
        // The whole track in view, the newest position included; only moves when something left the view.
        const shown = map.getBounds().pad(-0.05);
        if (!shown.contains(bounds)) map.fitBounds(bounds, { padding: [24, 24], maxZoom: 16 });
        else if (current && !shown.contains(current)) map.panTo(current);
      }
    }

    // A course ({path: [[lat, lon, along]…], points: [{lat, lon, label, passed}]}): its line, muted, drawn again
    // only when its path changes; its points are circles labelled with the rest (`labelled`).
    function drawCourseLine(course) {
      const path = course ? course.path : null;
      if (path === drawnCourse) return;
      drawnCourse = path;
      courseLayer.clearLayers();
      if (!course) return;
      L.polyline(course.path.map((p) => [p[0], p[1]]), { color: "#6f7a99", weight: 7, opacity: 0.5, lineCap: "round",
        lineJoin: "round", interactive: false, className: "course-line" }).addTo(courseLayer);
    }
    function labelCoursePoints(course) {
      for (const point of course ? course.points : []) {
        const marker = L.circleMarker([point.lat, point.lon], { radius: 5,
          className: `course-point${point.passed ? " passed" : ""}` }).addTo(pinLayer);
        labelled.push({ lat: point.lat, lon: point.lon, text: point.label, tier: "course", marker });
      }
    }
    const courseBounds = (course) => (course ? course.path.map((p) => [p[0], p[1]]) : []);

    return {
      kind: "street",
      note,
      map,
      draw(points, pins, options = {}) {
        const last = points.length > 0 ? points[points.length - 1] : null;
        const course = options.course || null;
        // The view first: Leaflet makes a layer's elements only once the map has one. A course is kept in view.
        follow(L.latLngBounds(points.map((p) => [p[0], p[1]]).concat(courseBounds(course))),
          options.current && last ? L.latLng(last[0], last[1]) : null);
        if (!hasView) return;
        drawCourseLine(course);
        trackLayer.clearLayers();
        pinLayer.clearLayers();
        // Consecutive segments of one colour share a line: thousands of points stay a few hundred layers.
        const { colours } = MR.paceColours(points);
        const runs = [];
        let run = null;
        for (let k = 0; k < colours.length; k++) {
          if (!run || run.colour !== colours[k]) {
            run = { colour: colours[k], latlngs: [[points[k][0], points[k][1]]] };
            runs.push(run);
          }
          run.latlngs.push([points[k + 1][0], points[k + 1][1]]);
        }
        for (const r of runs) {
          L.polyline(r.latlngs, { color: r.colour, weight: 5, opacity: 0.95, lineCap: "round", lineJoin: "round",
            interactive: false, className: "segment" }).addTo(trackLayer);
        }
        if (points.length > 0) {
          L.circleMarker([points[0][0], points[0][1]], { radius: 5, className: "start", interactive: false }).addTo(trackLayer);
        }
        labelled = [];
        labelCoursePoints(course);
        // Where the runner is along the course: a ring on its line (the marker itself is the GPS position).
        const spot = course && options.along != null ? MR.alongCourse(course.path, options.along) : null;
        if (spot) {
          L.circleMarker(spot, { radius: 6, className: "course-position", interactive: false }).addTo(pinLayer);
        }
        for (const pin of pins.filter((p) => p.lat != null && p.lon != null)) {
          const marker = L.circleMarker([pin.lat, pin.lon], { radius: 6, className: `pin tier-${pin.tier}` }).addTo(pinLayer);
          marker.getElement && marker.getElement() && marker.getElement().setAttribute("data-badge", pin.id);
          labelled.push({ lat: pin.lat, lon: pin.lon, text: pin.name, tier: pin.tier, marker });
        }
        // The marker is moved, never removed and made again, so it does not blink between updates.
        if (options.current && last) {
          if (!markerLayer) {
            markerLayer = L.circleMarker([last[0], last[1]], { radius: 8, className: "position", interactive: false }).addTo(map);
          } else {
            markerLayer.setLatLng([last[0], last[1]]);
          }
          markerLayer.bringToFront();  // over the pins drawn since (the finish of a loop is its start's pin)
          markerLayer.getElement().classList.toggle("stale", Boolean(options.stale));
        } else if (markerLayer) {
          markerLayer.remove();
          markerLayer = null;
        }
        relabel();
        container.dataset.segments = String(runs.length);
      },
      placeReplay(lat, lon, time) {
        if (!hasView) return;
        if (!replayMarker) {
          replayMarker = L.circleMarker([lat, lon], { radius: 7, className: "replay-marker", interactive: false }).addTo(map);
          replayMarker.getElement().id = "replay-marker";
        } else {
          replayMarker.setLatLng([lat, lon]);
        }
        replayMarker.getElement().dataset.time = time.toFixed(1);
      },
      // An SOS's position: a red ring, and the map brought to it.
      placeSOS(lat, lon) {
        if (!sosMarker) {
          sosMarker = L.circleMarker([lat, lon], { radius: 11, className: "sos-marker", interactive: false }).addTo(map);
        } else {
          sosMarker.setLatLng([lat, lon]);
        }
        map.setView([lat, lon], Math.max(map.getZoom() || 0, 15));
      },
      // The course page: the course, its points and every runner on it ([{runner, lat, lon, stale}]), named.
      drawCourse(course, runners) {
        follow(L.latLngBounds(courseBounds(course)), null);
        if (!hasView) return;
        drawCourseLine(course);
        trackLayer.clearLayers();
        pinLayer.clearLayers();
        labelled = [];
        labelCoursePoints(course);
        for (const runner of runners.filter((r) => r.lat != null && r.lon != null)) {
          const marker = L.circleMarker([runner.lat, runner.lon], { radius: 7,
            className: `position runner-marker${runner.stale ? " stale" : ""}` }).addTo(trackLayer);
          marker.getElement().setAttribute("data-runner", runner.runner);
          labelled.push({ lat: runner.lat, lon: runner.lon, text: runner.runner, tier: "runner", marker });
        }
        relabel();
      },
      // The overview: every live runner's newest position, named.
      drawRunners(runners) {
        const placed = runners.filter((r) => r.lat != null && r.lon != null);
        follow(L.latLngBounds(placed.map((r) => [r.lat, r.lon])), null);
        if (!hasView) return;
        trackLayer.clearLayers();
        labelled = [];
        for (const runner of placed) {
          const marker = L.circleMarker([runner.lat, runner.lon], { radius: 7,
            className: `position${runner.stale ? " stale" : ""}` }).addTo(trackLayer);
          labelled.push({ lat: runner.lat, lon: runner.lon, text: runner.runner, tier: "runner", marker });
        }
        relabel();
      },
    };
  }

  // A map view in `box` (a section holding the SVG element `svg`). `privateRunner`: the page was opened with a
  // share token, so tiles (which tell the tile server where the runner is) are asked only when the operator
  // allows it. Resolves to a view whose draw(points, pins, {current, stale}) draws the track.
  async function create(box, svg, { privateRunner = false } = {}) {
    const note = MR.element("p", { class: "map-note hint", "aria-live": "polite" });
    note.hidden = true;
    box.appendChild(note);
    // What the map says of itself (tiles off for a private runner) stays; the page adds its own (privacy zone).
    let standing = "";
    const say = (text) => {
      const whole = [standing, text].filter(Boolean).join(" ");
      note.textContent = whole;
      note.hidden = !whole;
    };
    const config = await settings();
    if (!config.leaflet || !config.tiles) return svgView(box, svg, say);
    let L;
    try { L = await loadLeaflet(); } catch (error) { return svgView(box, svg, say); }
    const tiles = !privateRunner || config.tiles_private;
    const view = streetView(L, box, svg, config, tiles, say);
    if (!tiles) {
      standing = "Street map off for a private runner: map tiles would tell the tile server where they are.";
      say("");
    }
    return view;
  }

  return { create, settings };
})();
