// /runs/ID: a saved run from /api/runs/ID.
"use strict";
(async () => {
  const id = MR.pathPart(1);
  const $ = (name) => document.getElementById(name);
  for (const format of ["gpx", "geojson", "svg"]) $(`download-${format}`).href = MR.withToken(`/runs/${id}.${format}`);
  const catalogue = await MR.badges();
  let run;
  try {
    run = await MR.getJSON(`/api/runs/${encodeURIComponent(id)}`);
  } catch (error) {
    // Nothing to replay or download: the page says so and shows none of a run's controls.
    $("status").textContent = "no such run";
    for (const part of ["summary", "map-box", "replay", "details"]) $(part).hidden = true;
    document.querySelector(".downloads").hidden = true;
    return;
  }
  const view = await MRMap.create($("map-box"), $("track"), { privateRunner: new URLSearchParams(location.search).has("token") });
  const summary = run.summary;
  document.title = `${summary.runner} · run ${summary.run} · MoonRunner Live`;
  $("runner-name").textContent = summary.runner;
  $("runner-name").href = MR.withToken(`/runners/${encodeURIComponent(summary.runner)}`);
  $("run-date").textContent = new Date(summary.date).toLocaleString();
  $("status").textContent = summary.status;
  $("status").className = `status ${summary.status}`;
  const badgeName = (badgeID) => { const b = MR.badgeByID(catalogue, badgeID); return b ? b.name : badgeID; };

  function render() {
    $("distance").textContent = MR.distance(summary.dist);
    $("elapsed").textContent = MR.duration(summary.time);
    $("moving").textContent = MR.duration(summary.moving);
    $("pace-average").textContent = MR.pace(summary.pace);
    $("filtered").textContent = String(summary.filtered);
    // Climb and the profile only for a run whose fixes had altitudes (summary's gain, the API's elevation).
    $("climb-box").hidden = summary.gain == null;
    if (summary.gain != null) $("climb").textContent = `+${Math.round(summary.gain)} m −${Math.round(summary.loss)} m`;
    drawElevation();
    const unit = MR.getUnit();
    $("split-unit").textContent = unit;
    $("splits").tBodies[0].replaceChildren(...run.splits.filter((s) => s.unit === unit).map((split) => {
      const row = MR.element("tr");
      row.append(MR.element("td", {}, String(split.n)), MR.element("td", {}, MR.duration(split.time)),
        MR.element("td", {}, MR.pace(split.pace)));
      return row;
    }));
    $("checkpoints").tBodies[0].replaceChildren(...run.checkpoints.map((checkpoint) => {
      const row = MR.element("tr");
      row.append(MR.element("td", {}, badgeName(checkpoint.from)), MR.element("td", {}, badgeName(checkpoint.to)),
        MR.element("td", {}, MR.duration(checkpoint.time)), MR.element("td", {}, MR.pace(checkpoint.pace)));
      return row;
    }));
    $("badges").replaceChildren(...run.badges.map((badge) => {
      const item = MR.element("li", { class: `tier-${badge.tier}`, "data-badge": badge.id });
      item.append(MR.element("span", { class: "badge-name" }, badge.name),
        MR.element("span", { class: "badge-detail" }, `${badge.tier} · ${MR.distance(badge.dist)} · ${MR.duration(badge.time)}`));
      return item;
    }));
  }
  // The elevation profile: the smoothed altitude ([seconds, metres] pairs) against distance, read off the points'
  // [lat, lon, dist, time] at the same times (against time when there are no points). Nothing without altitudes.
  function drawElevation() {
    const samples = run.elevation || [];
    const box = $("elevation-box"), svg = $("elevation-profile");
    box.hidden = samples.length < 2;
    if (box.hidden) return;
    const points = run.points;
    const distanceAt = (time) => {
      if (points.length < 2) return time;
      let lo = 0, hi = points.length - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (points[mid][3] <= time) lo = mid; else hi = mid - 1; }
      const a = points[lo], b = points[Math.min(lo + 1, points.length - 1)];
      const span = b[3] - a[3];
      return span > 0 ? a[2] + (b[2] - a[2]) * Math.min(1, Math.max(0, (time - a[3]) / span)) : a[2];
    };
    const xs = samples.map(([time]) => distanceAt(time)), ys = samples.map(([, metres]) => metres);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), low = Math.min(...ys), high = Math.max(...ys);
    // At least 20 m of height, so a flat run looks flat rather than its metre of wobble filling the box.
    const spanY = Math.max(high - low, 20), base = low - (spanY - (high - low)) / 2;
    const width = 800, height = 160, pad = 6;
    const x = (value) => x1 > x0 ? (value - x0) / (x1 - x0) * width : 0;
    const y = (value) => height - pad - (value - base) / spanY * (height - 2 * pad);
    const line = xs.map((value, index) => `${x(value).toFixed(1)},${y(ys[index]).toFixed(1)}`).join(" ");
    svg.replaceChildren(
      MR.svgNode("polygon", { class: "elevation-area", points: `0,${height} ${line} ${width},${height}` }),
      MR.svgNode("polyline", { class: "elevation-line", points: line }));
    const across = points.length < 2 ? MR.duration(x1 - x0) : MR.distance(x1 - x0);
    $("elevation-range").textContent = `${Math.round(low)}–${Math.round(high)} m over ${across}`;
  }
  MR.bindUnitSwitch();
  MR.onUnitChange(render);
  render();
  view.draw(run.points, run.badges, { current: false, replay: run.points.length >= 2 });

  // Replay: a marker moving along the track at SPEED times the pace the run was run at (the points carry the
  // seconds since the start), with the run time and distance beside the control (in the unit chosen).
  const points = run.points;
  if (points.length < 2) { $("replay").hidden = true; return; }
  const first = points[0][3], last = points[points.length - 1][3];
  let playing = false, runTime = first, wallStart = 0, runStart = first, placed = null;
  const speed = () => Number($("replay-speed").value);
  function place(time) {
    let lo = 0, hi = points.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (points[mid][3] <= time) lo = mid; else hi = mid - 1; }
    const a = points[lo], b = points[Math.min(lo + 1, points.length - 1)];
    const f = b[3] > a[3] ? Math.min(1, Math.max(0, (time - a[3]) / (b[3] - a[3]))) : 0;
    view.placeReplay(a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, time);
    placed = { time, dist: a[2] + (b[2] - a[2]) * f };
    showClock();
  }
  function showClock() {
    $("replay-clock").textContent = placed ? `${MR.duration(placed.time)} · ${MR.distance(placed.dist)}` : `0:00 · ${MR.distance(0)}`;
  }
  MR.onUnitChange(showClock);
  showClock();
  function frame(now) {
    if (!playing) return;
    runTime = Math.min(last, runStart + (now - wallStart) / 1000 * speed());
    place(runTime);
    if (runTime >= last) { playing = false; $("replay-play").textContent = "Replay"; return; }
    requestAnimationFrame(frame);
  }
  function play() {
    if (runTime >= last) runTime = first;
    playing = true;
    wallStart = performance.now();
    runStart = runTime;
    $("replay-play").textContent = "Pause";
    requestAnimationFrame(frame);
  }
  $("replay-play").addEventListener("click", () => {
    if (playing) { playing = false; $("replay-play").textContent = "Replay"; } else play();
  });
  // A new speed goes on from where the marker is.
  $("replay-speed").addEventListener("change", () => { if (playing) { runStart = runTime; wallStart = performance.now(); } });
})();
