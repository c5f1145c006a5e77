// The toolweave console: reads /console/api/* and renders it; no framework, no CDN.
// A bearer token (when the server has one) comes from the page's #token=... fragment, is kept in
// sessionStorage and sent as Authorization; the fragment never reaches the server. A page opened
// without it (or with a wrong one) gets 401 and asks for the token in a form.
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
  if (response.status === 401) {
    document.getElementById("token-form").hidden = false;
    throw new Error("enter the console token to see this server");
  }
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
  const text = typeof value === "string" ? value : JSON.stringify(value);
  // A break opportunity after each JSON separator (<wbr>, which copies as nothing), so a long
  // line breaks between keys and values, never inside a word (console.css: overflow-wrap).
  text.split(/(?<=[,:])/).forEach((part, i) => {
    if (i) code.appendChild(document.createElement("wbr"));
    code.appendChild(document.createTextNode(part));
  });
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
    cell(t.name), cell(t.description, "description"), cell(t.server || "local"),
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
    return [cell(p.tool_name), codeCell(p.args), cell(p.reason), cell(p.session_id || "none (a stateless request)"), cell(p.kind), actions];
  });
}

async function loadQueries() {
  const rows = await api("/queries?limit=200");
  fill("queries", rows, (r) => [
    cell(new Date(r.started * 1000).toLocaleString()), cell(r.kind), cell(r.tools.join(", ")),
    codeCell(r.input), cell(r.outcome || r.status, r.status === "success" ? "ok" : "error"),
    cell(Math.round(r.duration * 1000)), cell(r.tokens), cell(r.client), cell(r.session_id),
    cell(r.error, "error"),
  ]);
}

// Bar charts run horizontally so every tool name is drawn in full (no autoSkip), each box as
// tall as its bars need; value axes start at 0, and counts have integer ticks.
const BAR_PX = 22;
const AXIS_PX = 60;

function valueAxis(integer) {
  return { beginAtZero: true, suggestedMax: 1, ticks: integer ? { precision: 0 } : {} };
}

function barChart(labels, datasets, integer) {
  return {
    type: "bar",
    data: { labels, datasets },
    options: {
      indexAxis: "y",
      animation: false,
      maintainAspectRatio: false,
      scales: { x: valueAxis(integer), y: { ticks: { autoSkip: false } } },
    },
  };
}

function draw(id, config, rows) {
  const canvas = document.getElementById(id);
  const box = canvas.parentElement;
  const empty = config.data.labels.length === 0;
  box.hidden = empty;
  box.nextElementSibling.hidden = !empty;  // the figure's "no data yet"
  if (empty) {
    if (charts[id]) charts[id].destroy();
    delete charts[id];
    return;
  }
  box.style.height = (AXIS_PX + BAR_PX * rows) + "px";
  if (charts[id]) {
    charts[id].data = config.data;
    charts[id].update("none");
  } else {
    charts[id] = new Chart(canvas, config);
  }
}

async function loadUsage() {
  const usage = await api("/usage?limit=5000");
  const names = usage.tools.map((t) => t.tool);
  const series = (key) => usage.tools.map((t) => t[key]);
  const perTool = (bars) => names.length * bars;
  draw("chart-calls", barChart(names, [
    { label: "calls", data: series("calls"), backgroundColor: "#0969da" },
    { label: "errors", data: series("errors"), backgroundColor: "#cf222e" },
  ], true), perTool(2));
  draw("chart-latency", barChart(names, [
    { label: "p50", data: series("p50_ms"), backgroundColor: "#2da44e" },
    { label: "p90", data: series("p90_ms"), backgroundColor: "#bf8700" },
    { label: "p99", data: series("p99_ms"), backgroundColor: "#cf222e" },
  ], false), perTool(3));
  // Tool calls served over MCP use no model tokens: days with none are not drawn.
  const days = usage.tokens_per_day.filter((d) => d.tokens > 0);
  draw("chart-tokens", barChart(days.map((d) => d.day), [
    { label: "tokens", data: days.map((d) => d.tokens), backgroundColor: "#8250df" },
  ], true), days.length);
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

document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("token-input");
  sessionStorage.setItem("toolweave-token", input.value.trim());
  input.value = "";
  event.target.hidden = true;
  refresh();
});
window.addEventListener("hashchange", refresh);
refresh();
setInterval(refresh, POLL_MS);
