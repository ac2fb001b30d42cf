// /: the leaderboard: every live runner in the server's order (places from /api/overview, then rank events),
// with the gap to the leader, kept live by /events?watch=*.
"use strict";
(async () => {
  const catalogue = await MR.badges();
  const live = new Map();   // runner → {runner, run, pos, pace}
  let ended = [];           // end objects, newest first
  const $ = (id) => document.getElementById(id);
  const runnerLink = (runner) => MR.element("a", { href: `/runners/${encodeURIComponent(runner)}` }, runner);

  function render() {
    // The server's places; a runner not placed yet (its first rank event still to come) by distance.
    const dist = (entry) => (entry.pace && entry.pace.dist) || 0;
    const rows = [...live.values()].sort((a, b) => (a.pos && b.pos ? a.pos - b.pos : 0) || dist(b) - dist(a));
    // The gap at the leader's own average pace, as leaders: and rank: measure it.
    const leader = rows.length && rows[0].pace;
    $("overview").tBodies[0].replaceChildren(...rows.map((entry, index) => {
      const pace = entry.pace;
      const row = MR.element("tr", { "data-runner": entry.runner });
      const cell = (className, text) => row.appendChild(MR.element("td", { class: className }, text));
      cell("place", String(index + 1));
      row.appendChild(MR.element("td", { class: "name" })).appendChild(runnerLink(entry.runner));
      const gap = leader && pace ? Math.max(0, leader.dist - pace.dist) : null;
      const gapTime = gap !== null && leader.dist > 0 ? gap * leader.moving / leader.dist : null;
      cell("gap", gap === null ? "–" : gap === 0 ? "leader" : `${MR.distance(gap, 2)} · ${MR.duration(gapTime)}`);
      cell("distance", pace ? MR.distance(pace.dist) : "–");
      cell("elapsed", pace ? MR.duration(pace.time) : "–");
      cell("pace-current", pace ? MR.pace(pace.cur) : "–");
      cell("pace-average", pace ? MR.pace(pace.pace) : "–");
      const next = pace && pace.next ? MR.badgeByID(catalogue, pace.next) : null;
      cell("next", pace && pace.next ? `${next ? next.name : pace.next} in ${MR.distance(pace.left, 1)}` : "–");
      return row;
    }));
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

  MR.subscribe("watch=*", {
    run(run) {
      const entry = live.get(run.runner);
      live.set(run.runner, { runner: run.runner, run: run.id, pos: entry ? entry.pos : null, pace: null });
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
