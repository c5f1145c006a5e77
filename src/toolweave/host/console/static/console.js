// The toolweave console: reads /console/api/* and renders it; no framework, no CDN.
// A bearer token (when the server has one) comes from the page's #token=... fragment, is kept in
// sessionStorage and sent as Authorization; the fragment never reaches the server.
"use strict";

const API = "/console/api";
const POLL_MS = 1000;
const charts = {};

(function takeToken() {
  const match = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem("toolweave-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + "#overview");
  }
})();

function headers(extra) {
  const token = sessionStorage.getItem("toolweave-token");
  const out = Object.assign({}, extra || {});
  if (token) out.Authorization = "Bearer " + token;
  return out;
}

async function api(path, options) {
  const response = await fetch(API + path, Object.assign({}, options, {
    headers: headers(options && options.headers),
  }));
  if (!response.ok) throw new Error(path + ": HTTP " + response.status);
  return response.json();
}

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) td.className = cls;
  return td;
}

function codeCell(value) {
  const td = document.createElement("td");
  const code = document.createElement("code");
  code.textContent = typeof value === "string" ? value : JSON.stringify(value);
  td.appendChild(code);
  return td;
}

function fill(tableId, rows, render) {
  const body = document.querySelector("#" + tableId + " tbody");
  body.replaceChildren(...rows.map((row) => {
    const tr = document.createElement("tr");
    render(row).forEach((td) => tr.appendChild(td));
    return tr;
  }));
}

async function loadOverview() {
  const data = await api("/overview");
  document.getElementById("server-name").textContent = data.name;
  fill("tools", data.tools, (t) => [
    cell(t.name), cell(t.description), cell(t.server || "local"),
    cell([t.read_only ? "read-only" : "", t.destructive ? "destructive" : ""].filter(Boolean).join(", ")),
    cell(t.status, "ok"),
  ]);
  fill("servers", data.servers, (s) => [
    cell(s.name), cell(s.status, s.status === "connected" ? "ok" : s.status), cell(s.tools), cell(s.error),
  ]);
  fill("sessions", data.sessions, (s) => [cell(s.id), cell(s.client), cell(s.protocol), cell(s.idle_s)]);
}

async function decide(id, decision) {
  await api("/approvals/" + encodeURIComponent(id), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ decision }),
  });
  await loadApprovals();
}

function button(label, cls, onClick) {
  const b = document.createElement("button");
  b.textContent = label;
  b.className = cls;
  b.addEventListener("click", onClick);
  return b;
}

async function loadApprovals() {
  const pending = await api("/approvals");
  const badge = document.getElementById("pending-count");
  badge.textContent = String(pending.length);
  badge.classList.toggle("none", pending.length === 0);
  fill("approvals", pending, (p) => {
    const actions = document.createElement("td");
    actions.append(
      button("Approve", "approve", () => decide(p.id, "approve")),
      button("Always", "always", () => decide(p.id, "always")),
      button("Deny", "deny", () => decide(p.id, "deny")),
    );
    return [cell(p.tool_name), codeCell(p.args), cell(p.reason), cell(p.session_id), cell(p.kind), actions];
  });
}

async function loadQueries() {
  const rows = await api("/queries?limit=200");
  fill("queries", rows, (r) => [
    cell(new Date(r.started * 1000).toLocaleString()), cell(r.kind), cell(r.tools.join(", ")),
    codeCell(r.input), cell(r.status, r.status === "success" ? "ok" : "error"),
    cell(Math.round(r.duration * 1000)), cell(r.tokens), cell(r.session_id), cell(r.error, "error"),
  ]);
}

function draw(id, config) {
  if (charts[id]) {
    charts[id].data = config.data;
    charts[id].update("none");
  } else {
    charts[id] = new Chart(document.getElementById(id), config);
  }
}

async function loadUsage() {
  const usage = await api("/usage?limit=5000");
  const names = usage.tools.map((t) => t.tool);
  const bar = (datasets) => ({ type: "bar", data: { labels: names, datasets }, options: { animation: false } });
  draw("chart-calls", bar([
    { label: "calls", data: usage.tools.map((t) => t.calls), backgroundColor: "#0969da" },
    { label: "errors", data: usage.tools.map((t) => t.errors), backgroundColor: "#cf222e" },
  ]));
  draw("chart-latency", bar([
    { label: "p50", data: usage.tools.map((t) => t.p50_ms), backgroundColor: "#2da44e" },
    { label: "p90", data: usage.tools.map((t) => t.p90_ms), backgroundColor: "#bf8700" },
    { label: "p99", data: usage.tools.map((t) => t.p99_ms), backgroundColor: "#cf222e" },
  ]));
  draw("chart-tokens", {
    type: "line",
    data: {
      labels: usage.tokens_per_day.map((d) => d.day),
      datasets: [{ label: "tokens", data: usage.tokens_per_day.map((d) => d.tokens), borderColor: "#8250df" }],
    },
    options: { animation: false },
  });
}

const PAGES = { overview: loadOverview, approvals: loadApprovals, queries: loadQueries, usage: loadUsage };

function current() {
  const name = location.hash.replace("#", "");
  return PAGES[name] ? name : "overview";
}

async function refresh() {
  const page = current();
  document.querySelectorAll(".page").forEach((s) => s.classList.toggle("active", s.id === "page-" + page));
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", a.dataset.page === page));
  try {
    await PAGES[page]();
    if (page !== "approvals") await loadApprovals();  // keep the badge current
    document.getElementById("status").textContent = "updated " + new Date().toLocaleTimeString();
    document.body.dataset.loaded = page;
  } catch (error) {
    document.getElementById("status").textContent = String(error.message || error);
  }
}

window.addEventListener("hashchange", refresh);
refresh();
setInterval(refresh, POLL_MS);
