// weir's web dashboard. Reads the REST API of the runtime that serves it (Flink's routes
// and names) and redraws itself every REFRESH_MS. Routes (in the URL's fragment, as
// Flink's dashboard): #/ (jobs), #/jobs/<id>, and Flink's #/job/running/<id>/...,
// #/job/completed/<id>/... which lead to the same job page.
"use strict";

const REFRESH_MS = 3000;
const SAVEPOINT_POLL_MS = 500;

// ---- small helpers

// Creates an element: el("td", {class: "num"}, "text", child...). Text is never parsed
// as HTML.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  setAttrs(node, attrs);
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

function setAttrs(node, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
}

function formatTime(ms) {
  return ms > 0 ? new Date(ms).toLocaleString() : "-";
}

function formatDuration(ms) {
  if (ms === undefined || ms === null || ms < 0) return "-";
  if (ms < 1000) return ms + " ms";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " min " + Math.round(s % 60) + " s";
  return Math.floor(m / 60) + " h " + (m % 60) + " min";
}

function formatBytes(n) {
  if (n === undefined || n === null || n < 0) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}

function formatCount(n) {
  return n === undefined || n === null ? "-" : Number(n).toLocaleString();
}

function percent(ratio) {
  return Math.round(ratio * 100) + " %";
}

// Calls the REST API; resolves to the JSON body, rejects with an Error carrying Flink's
// error messages.
async function api(path, options) {
  const res = await fetch(path, options);
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (!res.ok) {
    const errors = body && Array.isArray(body.errors) ? body.errors.join("\n") : text;
    throw new Error(`${options && options.method || "GET"} ${path}: HTTP ${res.status}: ${errors}`);
  }
  return body;
}

function postJson(path, body, method) {
  return api(path, {
    method: method || "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify(body),
  });
}

function showMessage(text, kind) {
  const box = document.getElementById("message");
  box.textContent = text;
  box.className = kind;
  box.hidden = false;
}

// ---- routing

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const parts = hash.split("/").filter((p) => p);
  let m = null;
  if (parts[0] === "jobs" && parts[1]) m = parts[1];
  if (parts[0] === "job" && (parts[1] === "running" || parts[1] === "completed") && parts[2]) {
    m = parts[2];
  }
  return m ? {page: "job", id: m} : {page: "jobs"};
}

let current = null;       // the page on screen: {page, id, ...its state}
let refreshTimer = null;

async function refresh() {
  clearTimeout(refreshTimer);
  const page = current;
  try {
    if (page.page === "job") await renderJob(page);
    else await renderJobs(page);
    document.getElementById("updated").textContent =
        "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    document.getElementById("updated").textContent = "update failed: " + e.message;
  }
  if (page === current) refreshTimer = setTimeout(refresh, REFRESH_MS);
}

function navigate() {
  const r = route();
  const main = document.getElementById("main");
  main.replaceChildren();
  document.getElementById("message").hidden = true;
  current = r;
  if (r.page === "job") buildJobPage(main, r);
  else buildJobsPage(main, r);
  refresh();
}

// ---- job list

function buildJobsPage(main, page) {
  page.table = el("tbody", {});
  main.append(el("h1", {}, "Jobs"),
      el("section", {},
          el("table", {id: "jobs-table"},
              el("thead", {}, el("tr", {},
                  el("th", {}, "Name"), el("th", {}, "Job id"), el("th", {}, "State"),
                  el("th", {}, "Start time"), el("th", {class: "num"}, "Duration"),
                  el("th", {class: "num"}, "Tasks"))),
              page.table)));
}

async function renderJobs(page) {
  const overview = await api("/jobs/overview");
  const rows = overview.jobs.map((job) => {
    const link = "#/jobs/" + job.jid;
    return el("tr", {class: "job-row", "data-job-id": job.jid,
                     onclick: () => { location.hash = link; }},
        el("td", {}, el("a", {href: link}, job.name)),
        el("td", {class: "mono"}, job.jid),
        el("td", {}, el("span", {class: "state " + job.state}, job.state)),
        el("td", {}, formatTime(job["start-time"])),
        el("td", {class: "num"}, formatDuration(job.duration)),
        el("td", {class: "num"}, job.tasks.running + " / " + job.tasks.total + " running"));
  });
  if (rows.length === 0) {
    rows.push(el("tr", {}, el("td", {colspan: 6, class: "muted"},
        "No jobs. Submit one with 'weir run -m <address> <job.so>'.")));
  }
  page.table.replaceChildren(...rows);
}

// ---- one job

function buildJobPage(main, page) {
  const id = page.id;
  page.title = el("h1", {}, "Job ", el("span", {class: "mono"}, id));
  page.facts = el("dl", {class: "facts", id: "job-facts"});
  page.dir = el("input", {id: "savepoint-dir", type: "text",
                          placeholder: "savepoint directory (empty: state.savepoints.dir)"});
  page.buttons = [
    el("button", {id: "btn-savepoint", onclick: () => triggerSavepoint(page, false)},
        "Trigger savepoint"),
    el("button", {id: "btn-stop", onclick: () => triggerSavepoint(page, true)},
        "Stop with savepoint"),
    el("button", {id: "btn-cancel", class: "danger", onclick: () => cancelJob(page)}, "Cancel job"),
  ];
  page.graph = el("div", {id: "graph"});
  page.vertices = el("tbody", {});
  page.checkpointFacts = el("dl", {class: "facts", id: "checkpoint-facts"});
  page.restore = el("div", {id: "latest-restore"});
  page.plot = el("div", {id: "checkpoint-plot"});
  page.history = el("tbody", {});
  page.exceptions = el("div", {id: "exceptions"});
  main.append(
      page.title,
      el("section", {}, page.facts),
      el("div", {class: "actions"}, page.dir, page.buttons),
      el("section", {}, el("h2", {}, "Job graph"), page.graph,
          el("table", {id: "vertices-table"},
              el("thead", {}, el("tr", {},
                  el("th", {}, "Vertex"), el("th", {}, "Status"),
                  el("th", {class: "num"}, "Parallelism"),
                  el("th", {class: "num"}, "Records in"), el("th", {class: "num"}, "Records out"),
                  el("th", {class: "num"}, "Bytes in"), el("th", {class: "num"}, "Bytes out"),
                  el("th", {}, "Backpressure"), el("th", {class: "num"}, "Busy"),
                  el("th", {class: "num"}, "Idle"))),
              page.vertices)),
      el("section", {}, el("h2", {}, "Checkpoints"), page.checkpointFacts, page.restore),
      el("section", {}, el("h2", {}, "Checkpoint duration and size"), page.plot),
      el("section", {}, el("h2", {}, "Checkpoint history"),
          el("table", {id: "checkpoint-history"},
              el("thead", {}, el("tr", {},
                  el("th", {class: "num"}, "Id"), el("th", {}, "Type"), el("th", {}, "Status"),
                  el("th", {}, "Triggered"), el("th", {class: "num"}, "Duration"),
                  el("th", {class: "num"}, "State size"),
                  el("th", {class: "num"}, "Aligned / buffered"),
                  el("th", {class: "num"}, "Persisted in-flight"),
                  el("th", {class: "num"}, "Acknowledged"), el("th", {}, "Path"))),
              page.history)),
      el("section", {}, el("h2", {}, "Exceptions"), page.exceptions));
}

function fact(label, value, id) {
  return el("div", {}, el("dt", {}, label), el("dd", {id: id}, value));
}

async function renderJob(page) {
  const id = page.id;
  const [job, checkpoints, exceptions] = await Promise.all([
    api("/jobs/" + id),
    api("/jobs/" + id + "/checkpoints"),
    api("/jobs/" + id + "/exceptions?maxExceptions=10"),
  ]);
  const pressure = await Promise.all(job.vertices.map(
      (v) => api(`/jobs/${id}/vertices/${v.id}/backpressure`)));
  if (page !== current) return;
  page.job = job;
  document.title = job.name + " - weir";
  page.title.replaceChildren(job.name, " ", el("span", {class: "state " + job.state,
                                                         id: "job-state"}, job.state));
  page.facts.replaceChildren(
      fact("Job id", el("span", {class: "mono"}, job.jid)),
      fact("Started", formatTime(job["start-time"])),
      fact("Duration", formatDuration(job.duration)),
      fact("Ended", formatTime(job["end-time"])),
      fact("Max parallelism", job.maxParallelism));
  const running = job.state === "RUNNING";
  for (const b of page.buttons) b.disabled = !running || page.busy === true;
  renderGraph(page, job, pressure);
  renderVertexTable(page, job, pressure);
  renderCheckpoints(page, checkpoints);
  renderExceptions(page, exceptions);
}

// Columns by depth (longest path from a source), rows in plan order.
function layout(job) {
  const nodes = job.plan.nodes;
  const depth = {};
  const byId = Object.fromEntries(nodes.map((n) => [n.id, n]));
  function depthOf(id, seen) {
    if (depth[id] !== undefined) return depth[id];
    if (seen.has(id)) return 0;
    seen.add(id);
    const inputs = (byId[id] && byId[id].inputs) || [];
    const d = inputs.length === 0 ? 0 : 1 + Math.max(...inputs.map((i) => depthOf(i.id, seen)));
    depth[id] = d;
    return d;
  }
  const rows = {};
  const pos = {};
  for (const v of job.vertices) {
    const d = depthOf(v.id, new Set());
    rows[d] = (rows[d] || 0) + 1;
    pos[v.id] = {col: d, row: rows[d] - 1};
  }
  return {pos, columns: Math.max(0, ...Object.keys(rows).map(Number)) + 1,
          rows: Math.max(1, ...Object.values(rows))};
}

function renderGraph(page, job, pressure) {
  const W = 230, H = 96, GX = 80, GY = 24, PAD = 10;
  const {pos, columns, rows} = layout(job);
  const width = PAD * 2 + columns * W + (columns - 1) * GX;
  const height = PAD * 2 + rows * H + (rows - 1) * GY;
  const at = (id) => ({x: PAD + pos[id].col * (W + GX), y: PAD + pos[id].row * (H + GY)});
  const root = svg("svg", {width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
                           "aria-label": "job graph"},
      svg("defs", {}, svg("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
                                     markerWidth: 7, markerHeight: 7, orient: "auto"},
          svg("path", {d: "M0,0 L10,5 L0,10 z", fill: "#8a94a6"}))));
  for (const node of job.plan.nodes) {
    for (const input of node.inputs || []) {
      if (!pos[input.id] || !pos[node.id]) continue;
      const a = at(input.id), b = at(node.id);
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      const mx = (x1 + x2) / 2;
      root.append(svg("path", {class: "edge", d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`,
                               "marker-end": "url(#arrow)"}),
                  svg("text", {class: "edge-label", x: mx, y: (y1 + y2) / 2 - 5,
                               "text-anchor": "middle"}, input.ship_strategy));
    }
  }
  job.vertices.forEach((v, i) => {
    const p = at(v.id);
    const bp = pressure[i];
    const worst = Math.max(0, ...bp.subtasks.map((s) => s.ratio));
    const name = v.name.length > 30 ? v.name.slice(0, 29) + "…" : v.name;
    root.append(svg("g", {class: "vertex " + bp.backpressureLevel, "data-vertex-id": v.id,
                          transform: `translate(${p.x},${p.y})`},
        svg("title", {}, v.name),
        svg("rect", {width: W, height: H, rx: 6}),
        svg("text", {class: "title", x: 10, y: 20}, name),
        svg("text", {x: 10, y: 40}, `Parallelism ${v.parallelism} · ${v.status}`),
        svg("text", {x: 10, y: 60},
            `In ${formatCount(v.metrics["read-records"])} · Out ${formatCount(v.metrics["write-records"])}`),
        svg("text", {x: 10, y: 80}, `Backpressure ${bp.backpressureLevel} (${percent(worst)})`)));
  });
  page.graph.replaceChildren(root);
}

function renderVertexTable(page, job, pressure) {
  page.vertices.replaceChildren(...job.vertices.map((v, i) => {
    const subtasks = pressure[i].subtasks;
    const max = (key) => Math.max(0, ...subtasks.map((s) => s[key]));
    const level = pressure[i].backpressureLevel;
    return el("tr", {class: "vertex-row", "data-vertex-id": v.id},
        el("td", {}, v.name),
        el("td", {}, v.status),
        el("td", {class: "num"}, v.parallelism),
        el("td", {class: "num"}, formatCount(v.metrics["read-records"])),
        el("td", {class: "num"}, formatCount(v.metrics["write-records"])),
        el("td", {class: "num"}, formatBytes(v.metrics["read-bytes"])),
        el("td", {class: "num"}, formatBytes(v.metrics["write-bytes"])),
        el("td", {}, el("span", {class: "level " + level}, level), " ", percent(max("ratio"))),
        el("td", {class: "num"}, percent(max("busyRatio"))),
        el("td", {class: "num"}, percent(max("idleRatio"))));
  }));
}

function renderCheckpoints(page, stats) {
  const c = stats.counts;
  const latest = stats.latest || {};
  const done = latest.completed;
  page.checkpointFacts.replaceChildren(
      fact("Completed", c.completed, "checkpoints-completed"),
      fact("In progress", c.in_progress),
      fact("Failed", c.failed),
      fact("Restored", c.restored),
      fact("Latest completed", done ? "#" + done.id + " at " + formatTime(done.latest_ack_timestamp)
                                    : "none yet"),
      fact("Latest duration", done ? formatDuration(done.end_to_end_duration) : "-"),
      fact("Latest size", done ? formatBytes(done.state_size) : "-"));
  const r = latest.restored;
  page.restore.replaceChildren(el("p", {},
      el("strong", {}, "Latest restore: "),
      r ? `${r.is_savepoint ? "savepoint" : "checkpoint"} #${r.id} at ` +
              `${formatTime(r.restore_timestamp)} from ${r.external_path || "-"}`
        : "none (the job started without restoring)"));
  const history = (stats.history || []).slice().sort((a, b) => a.id - b.id);
  renderPlot(page, history.filter((h) => h.status === "COMPLETED"));
  const rows = history.slice().reverse().map((h) => el("tr", {class: "checkpoint-row",
                                                               "data-checkpoint-id": h.id},
      el("td", {class: "num"}, h.id),
      el("td", {}, h.is_savepoint ? "SAVEPOINT" : h.checkpoint_type),
      el("td", {}, h.status),
      el("td", {}, formatTime(h.trigger_timestamp)),
      el("td", {class: "num"}, formatDuration(h.end_to_end_duration)),
      el("td", {class: "num"}, formatBytes(h.state_size)),
      el("td", {class: "num"}, formatBytes(h.alignment_buffered)),
      el("td", {class: "num"}, formatBytes(h.persisted_data)),
      el("td", {class: "num"}, h.num_acknowledged_subtasks + " / " + h.num_subtasks),
      el("td", {class: "mono"}, h.external_path || "-")));
  if (rows.length === 0) {
    rows.push(el("tr", {}, el("td", {colspan: 10, class: "muted"},
        "No checkpoint yet (is execution.checkpointing.interval set?)")));
  }
  page.history.replaceChildren(...rows);
}

// Duration (left axis) and state size (right axis) of completed checkpoints over time.
function renderPlot(page, points) {
  const W = 760, H = 240, L = 70, R = 80, T = 14, B = 34;
  const root = svg("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img",
                           "aria-label": "checkpoint duration and size"});
  if (points.length === 0) {
    page.plot.replaceChildren(el("p", {class: "muted"}, "No completed checkpoint to plot yet."));
    return;
  }
  const t0 = Math.min(...points.map((p) => p.trigger_timestamp));
  const t1 = Math.max(...points.map((p) => p.trigger_timestamp));
  const maxDuration = Math.max(1, ...points.map((p) => p.end_to_end_duration));
  const maxSize = Math.max(1, ...points.map((p) => p.state_size));
  const x = (t) => L + (t1 === t0 ? (W - L - R) / 2 : (t - t0) / (t1 - t0) * (W - L - R));
  const yOf = (v, max) => T + (1 - v / max) * (H - T - B);
  for (let i = 0; i <= 4; i++) {
    const y = T + i / 4 * (H - T - B);
    root.append(svg("line", {class: "grid", x1: L, x2: W - R, y1: y, y2: y}),
                svg("text", {x: L - 6, y: y + 4, "text-anchor": "end"},
                    formatDuration(Math.round(maxDuration * (1 - i / 4)))),
                svg("text", {x: W - R + 6, y: y + 4}, formatBytes(Math.round(maxSize * (1 - i / 4)))));
  }
  root.append(svg("line", {class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B}),
              svg("text", {x: L, y: H - 10}, new Date(t0).toLocaleTimeString()),
              svg("text", {x: W - R, y: H - 10, "text-anchor": "end"},
                  new Date(t1).toLocaleTimeString()));
  for (const [key, max, cls] of [["end_to_end_duration", maxDuration, "duration"],
                                  ["state_size", maxSize, "size"]]) {
    const coords = points.map((p) => [x(p.trigger_timestamp), yOf(p[key], max)]);
    root.append(svg("polyline", {class: "series-" + cls,
                                 points: coords.map((c) => c.join(",")).join(" ")}));
    points.forEach((p, i) => root.append(
        svg("circle", {class: "point " + cls, cx: coords[i][0], cy: coords[i][1], r: 3.5},
            svg("title", {}, `#${p.id}: ${cls === "duration" ? formatDuration(p[key])
                                                             : formatBytes(p[key])}`))));
  }
  page.plot.replaceChildren(root, el("div", {class: "legend"},
      el("span", {class: "duration"}, "● duration (left)"),
      el("span", {class: "size"}, "● state size (right)")));
}

function renderExceptions(page, ex) {
  const entries = (ex.exceptionHistory && ex.exceptionHistory.entries) || [];
  if (!ex["root-exception"] && entries.length === 0) {
    page.exceptions.replaceChildren(el("p", {class: "muted"}, "No exceptions."));
    return;
  }
  const items = entries.map((e) => el("div", {class: "exception"},
      el("p", {}, el("strong", {}, e.exceptionName), " at ", formatTime(e.timestamp),
         e.taskName ? " in " + e.taskName : ""),
      el("pre", {class: "stack"}, e.stacktrace)));
  if (items.length === 0) items.push(el("pre", {class: "stack"}, ex["root-exception"]));
  page.exceptions.replaceChildren(...items);
}

// ---- actions (each asks first)

function setBusy(page, busy) {
  page.busy = busy;
  for (const b of page.buttons) b.disabled = busy || !page.job || page.job.state !== "RUNNING";
}

async function triggerSavepoint(page, stop) {
  const dir = page.dir.value.trim();
  const where = dir ? `into '${dir}'` : "into the configured savepoint directory";
  const question = stop ? `Stop job '${page.id}' with a savepoint ${where}?`
                        : `Trigger a savepoint of job '${page.id}' ${where}?`;
  if (!window.confirm(question)) return;
  setBusy(page, true);
  try {
    const body = stop ? {drain: false} : {"cancel-job": false};
    if (dir) body[stop ? "targetDirectory" : "target-directory"] = dir;
    const trigger = await postJson(`/jobs/${page.id}/${stop ? "stop" : "savepoints"}`, body);
    showMessage(`${stop ? "Stop with savepoint" : "Savepoint"} triggered (${trigger["request-id"]})…`,
                "ok");
    for (;;) {
      const st = await api(`/jobs/${page.id}/savepoints/${trigger["request-id"]}`);
      if (st.status.id === "COMPLETED") {
        const op = st.operation || {};
        if (op["failure-cause"]) {
          const cause = op["failure-cause"];
          throw new Error("the savepoint failed: " + (cause["stack-trace"] || cause.class));
        }
        showMessage(`Savepoint completed: ${op.location}` + (stop ? " (job stopped)" : ""), "ok");
        break;
      }
      await new Promise((r) => setTimeout(r, SAVEPOINT_POLL_MS));
    }
  } catch (e) {
    showMessage(e.message, "error");
  } finally {
    setBusy(page, false);
    if (page === current) refresh();
  }
}

async function cancelJob(page) {
  if (!window.confirm(`Cancel job '${page.id}'? Its state is not saved.`)) return;
  setBusy(page, true);
  try {
    await api(`/jobs/${page.id}?mode=cancel`, {method: "PATCH"});
    showMessage(`Cancelling job ${page.id}.`, "ok");
  } catch (e) {
    showMessage(e.message, "error");
  } finally {
    setBusy(page, false);
    if (page === current) refresh();
  }
}

// ---- start

async function showVersion() {
  try {
    const o = await api("/overview");
    document.getElementById("version").textContent = "version " + o["flink-version"];
  } catch (e) {
    document.getElementById("version").textContent = "";
  }
}

window.addEventListener("hashchange", navigate);
showVersion();
navigate();
