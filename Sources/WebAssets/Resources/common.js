// MoonRunner Live: helpers shared by every page. No dependencies, no network but our own server.
"use strict";
const MR = (() => {
  const METRES_PER_MILE = 1609.344;
  const EARTH_RADIUS = 6371008.8;
  const RED = [0xFF, 0x14, 0x2C], YELLOW = [0xFF, 0xD7, 0x00], GREEN = [0x00, 0x92, 0x4E];

  // --- Units: km or mi by the browser's locale, switchable, remembered. ---
  const MILE_REGIONS = ["US", "LR", "MM"];
  function defaultUnit() {
    const saved = localStorage.getItem("mr-unit");
    if (saved === "km" || saved === "mi") return saved;
    const region = (navigator.language || "en").split("-")[1] || "";
    return MILE_REGIONS.includes(region.toUpperCase()) ? "mi" : "km";
  }
  let unit = defaultUnit();
  const unitListeners = [];
  function setUnit(next) {
    unit = next === "mi" ? "mi" : "km";
    localStorage.setItem("mr-unit", unit);
    unitListeners.forEach((listener) => listener(unit));
  }
  function onUnitChange(listener) { unitListeners.push(listener); }
  function getUnit() { return unit; }
  function unitMetres() { return unit === "mi" ? METRES_PER_MILE : 1000; }

  // --- Formatting. ---
  function distance(metres, decimals = 2) {
    if (metres == null || !isFinite(metres)) return "–";
    return (metres / unitMetres()).toFixed(decimals) + " " + unit;
  }
  function duration(seconds) {
    if (seconds == null || !isFinite(seconds)) return "–";
    const s = Math.max(0, Math.round(seconds));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    const two = (n) => String(n).padStart(2, "0");
    return h > 0 ? `${h}:${two(m)}:${two(r)}` : `${m}:${two(r)}`;
  }
  // Paces travel as seconds per kilometre; shown per km or per mile.
  function pace(secondsPerKm) {
    if (secondsPerKm == null || !isFinite(secondsPerKm) || secondsPerKm <= 0) return "–";
    const perUnit = secondsPerKm * unitMetres() / 1000;
    if (perUnit >= 3600) return "–";
    const s = Math.round(perUnit);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} /${unit}`;
  }
  // A unix time as the viewer's clock shows it (HH:MM).
  function clock(unixSeconds) {
    if (unixSeconds == null || !isFinite(unixSeconds)) return "–";
    return new Date(unixSeconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
  function escapeText(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  function element(tag, attributes = {}, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    if (text != null) node.textContent = text;
    return node;
  }
  function pathPart(index) {
    const parts = location.pathname.split("/").filter((p) => p.length > 0);
    return parts[index] == null ? null : decodeURIComponent(parts[index]);
  }
  // --- Share links: a private runner's pages open with ?token=T; every URL they use carries it on. ---
  const shareToken = new URLSearchParams(location.search).get("token");
  function withToken(url) {
    if (!shareToken) return url;
    return `${url}${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(shareToken)}`;
  }
  async function getJSON(url) {
    const response = await fetch(withToken(url), { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return response.json();
  }

  // --- Badge catalogue (/api/badges): id → {id, name, distance, information}. ---
  let catalogue = null;
  async function badges() {
    if (!catalogue) {
      try { catalogue = await getJSON("/api/badges"); } catch (e) { catalogue = []; }
    }
    return catalogue;
  }
  function badgeByID(list, id) { return list.find((b) => b.id === id) || null; }
  // The badge before `id` in distance order, or null for the first.
  function badgeBefore(list, id) {
    const index = list.findIndex((b) => b.id === id);
    return index > 0 ? list[index - 1] : null;
  }

  // --- Pace colouring: the rule of RunCore's PaceColours, which the SVG and GeoJSON exports use too
  // (see protocol.md, Part 2). points: [[lat, lon, dist, time], ...]. Each segment's speed is taken over the
  // stretch around it of at least 100 m and at least 30 s (so GPS jitter averages out); colours run red
  // (slow) → yellow (median) → green (fast), anchored at the run's 5th/50th/95th percentile speeds, never
  // closer to the median than 10% of it (0.1 m/s at least), so a steady run stays yellow, not confetti.
  const WINDOW_METRES = 100, WINDOW_SECONDS = 30, SPREAD = 0.10, STEPS = 16;
  function smoothedSpeeds(points) {
    const speeds = [];
    let low = 0, high = 0;
    const last = points.length - 1;
    for (let k = 0; k < last; k++) {
      const middleDistance = (points[k][2] + points[k + 1][2]) / 2, middleTime = (points[k][3] + points[k + 1][3]) / 2;
      while (low < k && points[low + 1][2] <= middleDistance - WINDOW_METRES / 2
             && points[low + 1][3] <= middleTime - WINDOW_SECONDS / 2) low++;
      high = Math.max(high, k + 1);
      while (high < last && (points[high][2] < middleDistance + WINDOW_METRES / 2
             || points[high][3] < middleTime + WINDOW_SECONDS / 2)) high++;
      const seconds = points[high][3] - points[low][3];
      speeds.push(seconds > 0 ? (points[high][2] - points[low][2]) / seconds : null);
    }
    return speeds;
  }
  function percentile(sorted, p) {
    if (sorted.length === 0) return null;
    const rank = (sorted.length - 1) * p, low = Math.floor(rank), high = Math.ceil(rank);
    return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
  }
  function blend(from, to, t) {
    const f = Math.min(1, Math.max(0, isFinite(t) ? t : 0));
    return "#" + from.map((c, i) => Math.round(c + (to[i] - c) * f).toString(16).padStart(2, "0")).join("").toUpperCase();
  }
  function paceColours(points) {
    const speeds = smoothedSpeeds(points);
    const known = speeds.filter((v) => v != null).sort((x, y) => x - y);
    const median = percentile(known, 0.5);
    if (median == null) return { colours: speeds.map(() => blend(YELLOW, YELLOW, 0)), speeds, median: null };
    const floor = Math.max(0.1, SPREAD * median);
    const slowSpread = Math.max(median - percentile(known, 0.05), floor);
    const fastSpread = Math.max(percentile(known, 0.95) - median, floor);
    // 16 steps each side: the eye can't tell finer ones apart, and equal neighbours share one path.
    const step = (t) => Math.round(Math.min(1, Math.max(0, t)) * STEPS) / STEPS;
    const colours = speeds.map((v) => {
      if (v == null) return blend(RED, RED, 0); // no usable time around it: drawn as slow
      if (v < median) return blend(YELLOW, RED, step((median - v) / slowSpread));
      return blend(YELLOW, GREEN, step((v - median) / fastSpread));
    });
    return { colours, speeds, median };
  }

  // --- The track as SVG: local projection around the track, scaled to fit, labels kept inside. ---
  const SVG = "http://www.w3.org/2000/svg";
  function project(points, width, height, padding) {
    if (points.length === 0) return { xy: () => [width / 2, height / 2] };
    const rad = Math.PI / 180;
    let minLat = Infinity, maxLat = -Infinity, minLon = Infinity, maxLon = -Infinity;
    for (const [lat, lon] of points) {
      minLat = Math.min(minLat, lat); maxLat = Math.max(maxLat, lat);
      minLon = Math.min(minLon, lon); maxLon = Math.max(maxLon, lon);
    }
    const lat0 = (minLat + maxLat) / 2, lon0 = (minLon + maxLon) / 2, cos0 = Math.cos(lat0 * rad);
    const local = (lat, lon) => [EARTH_RADIUS * (lon - lon0) * rad * cos0, -EARTH_RADIUS * (lat - lat0) * rad];
    const [x1, y1] = local(maxLat, minLon), [x2, y2] = local(minLat, maxLon);
    const spanX = Math.max(x2 - x1, 1), spanY = Math.max(y2 - y1, 1);
    const scale = Math.min((width - 2 * padding) / spanX, (height - 2 * padding) / spanY);
    const offsetX = (width - spanX * scale) / 2, offsetY = (height - spanY * scale) / 2;
    return { xy: (lat, lon) => { const [x, y] = local(lat, lon); return [offsetX + (x - x1) * scale, offsetY + (y - y1) * scale]; } };
  }
  function svgNode(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    return node;
  }
  // --- Labels that never overlap: each pin's label goes right, left, above or below it, wherever it hits no
  // other label, pin or edge; a label with no free place is left off (its pin shows it on hover or tap).
  // Sizes are screen pixels times `scale` (the SVG drawing's units per pixel), so text is 12 px on any screen.
  let measureContext = null;
  function textWidth(text) {
    if (!measureContext) measureContext = document.createElement("canvas").getContext("2d");
    measureContext.font = "600 12px system-ui, sans-serif";
    return Math.ceil(measureContext.measureText(text).width) + 8;
  }
  function overlaps(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }
  // items: [{x, y, text}] in the drawing's units, in priority order; returns [{dx, dy, w, h} | null].
  function placeLabels(items, width, height, scale = 1) {
    const h = 18 * scale, gap = 9 * scale, pin = 7 * scale;
    const taken = items.map((item) => ({ x: item.x - pin, y: item.y - pin, w: 2 * pin, h: 2 * pin }));
    return items.map((item, index) => {
      const w = textWidth(item.text) * scale;
      const candidates = [[gap, -h / 2], [-gap - w, -h / 2], [-w / 2, -h - gap], [-w / 2, gap]];
      for (const [dx, dy] of candidates) {
        const box = { x: item.x + dx, y: item.y + dy, w, h };
        if (box.x < 2 * scale || box.y < 2 * scale || box.x + w > width - 2 * scale || box.y + h > height - 2 * scale) continue;
        if (taken.some((other, k) => k !== index && overlaps(box, other))) continue;
        taken.push(box);
        return { dx, dy, w, h };
      }
      return null;
    });
  }

  // --- Courses: a path of [lat, lon, along] (metres along the course), as /api/courses/NAME sends it. ---
  // The spot `along` metres along the course, [lat, lon]; null without a path.
  function alongCourse(path, along) {
    if (!path || path.length === 0) return null;
    if (!(along > path[0][2])) return [path[0][0], path[0][1]];
    const last = path[path.length - 1];
    if (along >= last[2]) return [last[0], last[1]];
    let low = 0, high = path.length - 1;
    while (high - low > 1) {
      const middle = (low + high) >> 1;
      if (path[middle][2] <= along) low = middle; else high = middle;
    }
    const a = path[low], b = path[high], f = b[2] > a[2] ? (along - a[2]) / (b[2] - a[2]) : 0;
    return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f];
  }

  // Draws points (coloured by pace), badge pins and, when `current`, the runner's position. With `course`
  // ({path, points: [{lat, lon, label, passed}]}) the course is drawn first, muted, under the track, its points
  // labelled; `runners` ([{runner, lat, lon}]) are markers on it (the course page). Returns the projection.
  function drawTrack(svg, points, badgePins, options = {}) {
    const width = 800, height = 500, padding = 28;
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.appendChild(svgNode("rect", { x: 0, y: 0, width, height, class: "map-background" }));
    const { colours } = paceColours(points);
    const course = options.course && options.course.path.length > 1 ? options.course : null;
    const projection = project(course ? points.concat(course.path) : points, width, height, padding);
    const { xy } = projection;
    if (course) {
      const d = course.path.map((p, k) => { const [x, y] = xy(p[0], p[1]); return `${k ? "L" : "M"}${x.toFixed(1)} ${y.toFixed(1)}`; });
      svg.appendChild(svgNode("path", { d: d.join(" "), class: "course-line" }));
    }
    // Consecutive segments of one colour share a path: thousands of points stay a few hundred nodes.
    let run = null;
    for (let k = 0; k < colours.length; k++) {
      const [xa, ya] = xy(points[k][0], points[k][1]), [xb, yb] = xy(points[k + 1][0], points[k + 1][1]);
      if (!run || run.colour !== colours[k]) {
        run = { colour: colours[k], d: `M${xa.toFixed(1)} ${ya.toFixed(1)}` };
        run.node = svgNode("path", { stroke: colours[k], class: "segment" });
        svg.appendChild(run.node);
      }
      run.d += ` L${xb.toFixed(1)} ${yb.toFixed(1)}`;
      run.node.setAttribute("d", run.d);
    }
    // A privacy zone withholds some positions (null): such a pin is not drawn. Labels are placed where they
    // overlap nothing, at 12 screen pixels whatever the picture's width (at 390 px wide, 13 units were 6 px).
    const pins = badgePins.filter((pin) => pin.lat != null && pin.lon != null);
    const scale = width / Math.max(1, svg.getBoundingClientRect().width || width);
    // Labels are placed together, the course's points and runners first: none covers another.
    const marks = course ? course.points : [];
    const runners = (options.runners || []).filter((r) => r.lat != null && r.lon != null);
    const spotOf = (lat, lon, text) => { const [x, y] = xy(lat, lon); return { x, y, text }; };
    const markSpots = marks.map((m) => spotOf(m.lat, m.lon, m.label));
    const runnerSpots = runners.map((r) => spotOf(r.lat, r.lon, r.runner));
    const spots = pins.map((badge) => spotOf(badge.lat, badge.lon, badge.name));
    const allPlaces = placeLabels(markSpots.concat(runnerSpots, spots), width, height, scale);
    const places = allPlaces.slice(markSpots.length + runnerSpots.length);
    const label = (group, spot, place, className) => {
      if (place) {
        const text = svgNode("text", { x: spot.x + place.dx + 4 * scale, y: spot.y + place.dy + place.h * 0.72,
          "text-anchor": "start", "font-size": (12 * scale).toFixed(1), class: className || "" });
        text.textContent = spot.text;
        group.appendChild(text);
      } else {
        const title = svgNode("title", {});
        title.textContent = spot.text;
        group.appendChild(title);
      }
    };
    marks.forEach((mark, index) => {
      const spot = markSpots[index];
      const group = svgNode("g", { class: `course-point${mark.passed ? " passed" : ""}`, "data-point": mark.name });
      group.appendChild(svgNode("circle", { cx: spot.x, cy: spot.y, r: 5 * Math.max(1, scale * 0.8) }));
      label(group, spot, allPlaces[index]);
      svg.appendChild(group);
    });
    pins.forEach((badge, index) => {
      const { x, y } = spots[index];
      const group = svgNode("g", { class: `pin tier-${badge.tier}`, "data-badge": badge.id });
      group.appendChild(svgNode("circle", { cx: x, cy: y, r: 6 * Math.max(1, scale * 0.8) }));
      label(group, spots[index], places[index]);
      svg.appendChild(group);
    });
    if (course && options.along != null) {
      const spot = alongCourse(course.path, options.along);
      const [x, y] = xy(spot[0], spot[1]);
      svg.appendChild(svgNode("circle", { cx: x, cy: y, r: 6, class: "course-position" }));
    }
    runners.forEach((runner, index) => {
      const spot = runnerSpots[index];
      const group = svgNode("g", { class: "course-runner", "data-runner": runner.runner });
      group.appendChild(svgNode("circle", { cx: spot.x, cy: spot.y, r: 7, class: "runner-marker" }));
      label(group, spot, allPlaces[markSpots.length + index], "runner-label");
      svg.appendChild(group);
    });
    if (points.length > 0) {
      const first = xy(points[0][0], points[0][1]);
      svg.appendChild(svgNode("circle", { cx: first[0], cy: first[1], r: 5, class: "start" }));
      if (options.current) {
        const last = points[points.length - 1];
        const [x, y] = xy(last[0], last[1]);
        svg.appendChild(svgNode("circle", { cx: x, cy: y, r: 8, id: "position" }));
      }
    }
    return projection;
  }

  // --- Toasts. ---
  function toast(title, text) {
    const box = document.getElementById("toasts");
    if (!box) return;
    const node = element("div", { class: "toast", role: "status" });
    node.appendChild(element("strong", {}, title));
    node.appendChild(element("p", {}, text));
    box.appendChild(node);
    // A burst of badges (a late joiner's reconnect, a fast runner) shows the newest three.
    while (box.children.length > 3) box.removeChild(box.firstChild);
    setTimeout(() => node.classList.add("leaving"), 7000);
    setTimeout(() => node.remove(), 8000);
  }

  // --- Unit switch: any element with data-unit="km|mi". ---
  function bindUnitSwitch() {
    const buttons = document.querySelectorAll("[data-unit]");
    const mark = () => buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.unit === unit)));
    buttons.forEach((b) => b.addEventListener("click", () => setUnit(b.dataset.unit)));
    onUnitChange(mark);
    mark();
  }

  // --- Server-Sent Events: one listener per event kind; data is the event's JSON object. ---
  const KINDS = ["track", "run", "pace", "badge", "split", "end", "msg", "rank", "alert", "point"];
  function subscribe(query, handlers, onState) {
    const source = new EventSource(withToken(`/events?${query}`));
    for (const kind of KINDS) {
      if (!handlers[kind]) continue;
      source.addEventListener(kind, (message) => {
        try { handlers[kind](JSON.parse(message.data)); } catch (error) { console.error(kind, error); }
      });
    }
    source.onopen = () => onState && onState("live");
    source.onerror = () => onState && onState(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
    return source;
  }

  return {
    METRES_PER_MILE, getUnit, setUnit, onUnitChange, unitMetres, distance, duration, pace, clock, escapeText, element,
    pathPart, getJSON, withToken, project, svgNode, placeLabels, badges, badgeByID, badgeBefore, smoothedSpeeds, paceColours, percentile, alongCourse, drawTrack, toast,
    bindUnitSwitch, subscribe,
  };
})();
