// /courses/NAME: a race course live: the course, its points and every runner on it, placed on the course by how
// far along it they are. The course and who is on it come from /api/courses/NAME (asked again every 10 s, for
// runners who joined it since); their progress from /events?watch=*, filtered to the runners the page knows.
"use strict";
(async () => {
  const $ = (id) => document.getElementById(id);
  const name = MR.pathPart(1);
  const REFRESH = 10000;
  document.title = `${name} · course · MoonRunner Live`;
  $("course-name").textContent = name;
  const view = await MRMap.create($("map-box"), $("track"));
  let course = null;        // {name, length, path: [[lat, lon, along]…], points: [{name, along, lat, lon}]}
  const runners = new Map(); // runner → {runner, along, togo, eta, pace, next_point, next_point_eta, off_course}
  const runnerLink = (runner) => MR.element("a", { href: `/runners/${encodeURIComponent(runner)}` }, runner);

  function setStatus(text, kind) {
    $("status").textContent = text;
    $("status").className = `status ${kind || ""}`;
  }

  // The map at most once per animation frame, however many paces came meanwhile.
  let drawPending = false;
  function drawMap() {
    if (drawPending || !course) return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      const drawing = { path: course.path, points: course.points.map((p) => ({ lat: p.lat, lon: p.lon, name: p.name,
        label: `${p.name} · ${MR.distance(p.along, 1)}` })) };
      const markers = [...runners.values()].map((r) => {
        const spot = MR.alongCourse(course.path, r.along);
        return { runner: r.runner, lat: spot ? spot[0] : null, lon: spot ? spot[1] : null };
      });
      view.drawCourse(drawing, markers);
    });
  }

  function renderPoints() {
    $("point-unit").textContent = `Along (${MR.getUnit()})`;
    $("course-points").tBodies[0].replaceChildren(...(course ? course.points : []).map((point) => {
      const row = MR.element("tr", { "data-point": point.name });
      row.appendChild(MR.element("td", {}, point.name));
      row.appendChild(MR.element("td", {}, MR.distance(point.along, 2)));
      return row;
    }));
  }

  function render() {
    if (course) {
      const count = runners.size;
      $("course-summary").textContent = `${MR.distance(course.length, 2)} · ${course.points.length} point${course.points.length === 1 ? "" : "s"}`
        + ` · ${count === 0 ? "nobody" : count} on it now`;
    }
    // Furthest along first.
    const rows = [...runners.values()].sort((a, b) => b.along - a.along || (a.runner < b.runner ? -1 : 1));
    $("course-runners").tBodies[0].replaceChildren(...rows.map((entry, index) => {
      const row = MR.element("tr", { "data-runner": entry.runner });
      const cell = (className, text) => { const td = MR.element("td", { class: className }, text); row.appendChild(td); return td; };
      cell("place", String(index + 1));
      const who = cell("runner");
      who.appendChild(runnerLink(entry.runner));
      if (entry.off_course) who.appendChild(MR.element("span", { class: "off-course" }, "off course"));
      cell("along", MR.distance(entry.along, 2));
      cell("togo", MR.distance(entry.togo, 1));
      cell("next", entry.next_point ? `${entry.next_point}${entry.next_point_eta != null ? ` ~${MR.clock(entry.next_point_eta)}` : ""}` : "finish");
      cell("eta", entry.eta != null ? `~${MR.clock(entry.eta)}` : "–");
      cell("pace", MR.pace(entry.pace));
      return row;
    }));
    $("nobody").hidden = rows.length > 0;
    drawMap();
  }

  async function refresh() {
    try {
      const answer = await MR.getJSON(`/api/courses/${encodeURIComponent(name)}`);
      // The same path object while the course is unchanged: the street map draws its line once.
      if (!course || course.length !== answer.length || course.path.length !== answer.path.length) {
        course = answer;
        renderPoints();
      }
      const listed = new Set(answer.runners.map((r) => r.runner));
      for (const runner of [...runners.keys()]) if (!listed.has(runner)) runners.delete(runner);
      for (const entry of answer.runners) runners.set(entry.runner, entry);
      render();
    } catch (error) {
      if (String(error.message).endsWith("404")) {
        setStatus("no such course", "offline");
        $("course-summary").textContent = "No course by this name: moonrunner course add FILE --name NAME stores one.";
      }
    }
  }

  MR.bindUnitSwitch();
  MR.onUnitChange(() => { renderPoints(); render(); });
  await refresh();
  setInterval(refresh, REFRESH);

  MR.subscribe("watch=*", {
    pace(pace) {
      const entry = runners.get(pace.runner);
      if (!entry) return;
      // A pace without `along` is a runner who left the course (course:off).
      if (pace.along == null) { runners.delete(pace.runner); render(); return; }
      Object.assign(entry, { along: pace.along, togo: pace.togo, next_point: pace.next_point || null,
        next_point_eta: pace.next_point_eta, eta: pace.eta, pace: pace.pace });
      render();
    },
    point(point) {
      // A late joiner is told the passages so far too: only a fresh one is news.
      if (!runners.has(point.runner) || Date.now() / 1000 - Number(point.ts) > 60) return;
      MR.toast(`${point.runner} passed ${point.name}`, `at ${MR.clock(Number(point.ts))}, ${MR.duration(point.time)} into the run`);
    },
    end(end) {
      if (runners.delete(end.runner)) render();
    },
  }, (state) => {
    if (!course) return;
    setStatus(state, state === "live" ? "live" : "offline");
  });
})();
