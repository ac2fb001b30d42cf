// /: the leaderboard: every live runner in the server's order (places from /api/overview, then rank events),
// with the gap to the leader, kept live by /events?watch=*.
"use strict";
(async () => {
  const catalogue = await MR.badges();
  const live = new Map();   // runner → {runner, run, pos, pace}
  let ended = [];           // end objects, newest first
  const $ = (id) => document.getElementById(id);
  const runnerLink = (runner) => MR.element("a", { href: `/runners/${encodeURIComponent(runner)}` }, runner);

  // The street map of where everyone is, when the server has one (no SVG fallback here: the table says it all).
  const view = await MRMap.create($("map-box"), $("track"));
  if (view.kind === "street") $("map-box").hidden = false;

  // Rows are kept per runner and moved, not rebuilt: places change in place, and exactly one row leads.
  const rowsByRunner = new Map();
  function rowFor(runner) {
    let row = rowsByRunner.get(runner);
    if (!row) {
      row = MR.element("tr", { "data-runner": runner });
      for (const className of ["place", "name", "gap", "distance", "elapsed", "pace-current", "pace-average", "next"]) {
        row.appendChild(MR.element("td", { class: className }));
      }
      row.querySelector(".name").appendChild(runnerLink(runner));
      rowsByRunner.set(runner, row);
    }
    return row;
  }
  // The map is redrawn at most once per animation frame, however many paces came meanwhile.
  let mapPending = null;
  function drawMap(rows) {
    if (view.kind !== "street") return;
    const pending = mapPending;
    mapPending = rows;
    if (pending) return;
    requestAnimationFrame(() => {
      const latest = mapPending;
      mapPending = null;
      view.drawRunners(latest.map((entry) => ({
        runner: entry.runner, lat: entry.pace ? entry.pace.lat : null, lon: entry.pace ? entry.pace.lon : null,
        stale: entry.pace ? Date.now() / 1000 - Number(entry.pace.ts) > 15 : false,
      })));
    });
  }
  // The courses being run, each with its runners (from /api/overview: a run event does not say the course),
  // linking to each course's own page and board.
  function renderCourses() {
    const byCourse = new Map();
    for (const entry of live.values()) {
      if (!entry.course) continue;
      byCourse.set(entry.course, [...(byCourse.get(entry.course) || []), entry.runner]);
    }
    const items = [...byCourse.keys()].sort().map((course) => {
      const runners = byCourse.get(course).sort();
      const item = MR.element("li", { "data-course": course });
      item.appendChild(MR.element("a", { href: `/courses/${encodeURIComponent(course)}` }, course));
      item.append(`: ${runners.length} ${runners.length === 1 ? "runner" : "runners"} (${runners.join(", ")})`);
      return item;
    });
    $("courses").replaceChildren(...items);
    $("courses").hidden = items.length === 0;
  }

  function render() {
    renderCourses();
    // The server's places; a runner not placed yet (its first rank event still to come) by distance. Two
    // runners briefly sharing a place (one rank event has come, the other's not yet) go by distance.
    const dist = (entry) => (entry.pace && entry.pace.dist) || 0;
    const rows = [...live.values()].sort((a, b) =>
      (a.pos && b.pos ? a.pos - b.pos : a.pos ? -1 : b.pos ? 1 : 0) || dist(b) - dist(a) || (a.runner < b.runner ? -1 : 1));
    // The gap at the leader's own average pace, as leaders: and rank: measure it.
    const leader = rows.length && rows[0].pace;
    const body = $("overview").tBodies[0];
    for (const runner of [...rowsByRunner.keys()]) {
      if (!live.has(runner)) { rowsByRunner.get(runner).remove(); rowsByRunner.delete(runner); }
    }
    rows.forEach((entry, index) => {
      const pace = entry.pace;
      const row = rowFor(entry.runner);
      const set = (className, text) => { const cell = row.querySelector(`td.${className}`); if (cell.textContent !== text) cell.textContent = text; };
      set("place", String(index + 1));
      const gap = index === 0 || !leader || !pace ? null : Math.max(0, leader.dist - pace.dist);
      const gapTime = gap !== null && leader.dist > 0 ? gap * leader.moving / leader.dist : null;
      set("gap", index === 0 ? "leader" : gap === null ? "–" : gap === 0 ? "level" : `${MR.distance(gap, 2)} · ${MR.duration(gapTime)}`);
      set("distance", pace ? MR.distance(pace.dist) : "–");
      set("elapsed", pace ? MR.duration(pace.time) : "–");
      set("pace-current", pace ? MR.pace(pace.cur) : "–");
      set("pace-average", pace ? MR.pace(pace.pace) : "–");
      const next = pace && pace.next ? MR.badgeByID(catalogue, pace.next) : null;
      set("next", pace && pace.next ? `${next ? next.name : pace.next} in ${MR.distance(pace.left, 1)}` : "–");
      // Moved only when out of place: the same row element, now in its new place.
      if (body.children[index] !== row) body.insertBefore(row, body.children[index] || null);
    });
    drawMap(rows);
    $("nobody").hidden = rows.length > 0;
    $("ended").replaceChildren(...ended.slice(0, 20).map((end) => {
      const item = MR.element("li", { "data-runner": end.runner });
      item.appendChild(runnerLink(end.runner));
      item.append(` ${MR.distance(end.dist)} in ${MR.duration(end.time)} (${MR.pace(end.pace)}) `);
      if (end.saved) item.appendChild(MR.element("a", { href: `/runs/${end.run}` }, "see the run"));
      else item.append(`· ${end.reason}`);
      return item;
    }));
  }

  try {
    const overview = await MR.getJSON("/api/overview");
    for (const entry of overview.live) live.set(entry.runner, entry);
    ended = overview.ended.slice();
  } catch (error) {
    console.error(error);
  }
  MR.bindUnitSwitch();
  MR.onUnitChange(render);
  render();
  // Who follows which course is in /api/overview only: asked again now and then, for runs started since.
  setInterval(async () => {
    try {
      const overview = await MR.getJSON("/api/overview");
      for (const entry of overview.live) {
        const known = live.get(entry.runner);
        if (known) known.course = entry.course;
      }
      renderCourses();
    } catch (error) {
      console.error(error);
    }
  }, 15000);

  MR.subscribe("watch=*", {
    run(run) {
      const entry = live.get(run.runner);
      live.set(run.runner, { runner: run.runner, run: run.id, pos: entry ? entry.pos : null,
                             course: entry ? entry.course : null, pace: null });
      render();
    },
    rank(rank) {
      const entry = live.get(rank.runner) || { runner: rank.runner, run: null, pace: null };
      entry.pos = rank.pos;
      live.set(rank.runner, entry);
      render();
    },
    pace(pace) {
      const entry = live.get(pace.runner) || { runner: pace.runner, run: null, pos: null, pace: null };
      entry.pace = pace;
      live.set(pace.runner, entry);
      render();
    },
    end(end) {
      live.delete(end.runner);
      ended = [end, ...ended.filter((e) => e.run !== end.run)];
      render();
    },
  }, (state) => {
    $("status").textContent = state;
    $("status").className = `status ${state === "live" ? "live" : "offline"}`;
  });
})();
