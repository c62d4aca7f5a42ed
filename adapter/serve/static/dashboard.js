// The dashboard: /api/status every two seconds, drawn as tables and an SVG chart.
"use strict";

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b"];

function logLink(path) {
  if (!path) return "";
  const id = "0~" + path.split("/").join("~");
  return el("a", { href: withToken("/games/" + encodeURIComponent(id)) }, "view");
}

function sessionRow(s) {
  const today = s.quota.today ?? "not counted";  // a disabled session's, one counting, or one without a quota
  const quota = `${today} / ${s.quota.games_per_day || "-"}`;
  const breaker = s.breaker.state === "closed" ? `closed (${s.breaker.recent_failures}/${s.breaker.threshold})`
    : `${s.breaker.state}, retry in ${s.breaker.retry_in}s`;
  const last = s.last_game ? el("span", {}, (s.last_game.scores || []).join(" / ") + " ", logLink(s.last_game.log)) : "";
  return el("tr", { "data-session": s.name },
    el("td", {}, el("b", { text: s.name })),
    el("td", { text: s.kind }), el("td", { text: s.policy }),
    el("td", {}, el("span", { class: "badge " + s.state.replace(" ", "-"), text: s.state }),
      s.last_error ? el("div", { class: "error", text: s.last_error }) : null),
    el("td", { text: breaker }), el("td", { text: quota }), el("td", { text: s.games }),
    el("td", { text: s.hands }), el("td", { text: s.decisions }), fallbackCell(s), el("td", { text: s.restarts }),
    el("td", { text: s.failures }), el("td", {}, last));
}

// answers a fallback gave instead of the policy (share of the decisions) and illegal ones;
// the last reason under them, in red: a policy that fails at every turn still plays on
function fallbackCell(s) {
  const share = s.decisions ? ` (${(100 * s.fallbacks / s.decisions).toFixed(1)}%)` : "";
  return el("td", { "data-fallbacks": s.fallbacks },
    el("span", { class: s.fallbacks || s.illegal ? "error" : "", text: `${s.fallbacks}${share} / ${s.illegal}` }),
    s.last_fallback ? el("div", { class: "error", text: `${s.last_fallback.policy}: ${s.last_fallback.reason}` }) : null);
}

function liveBlock(name, c) {
  return el("div", { class: "row", "data-live": name },
    el("b", { text: name + ": " }),
    `${c.variant} ${c.round}, seat ${c.seat}, turn ${c.turn}, wall ${c.wall ?? "?"}, scores ${c.scores.join(" / ")} `,
    c.hand ? tileRow(splitMpsz(c.hand), "small") : null);
}

// "123m55z" -> ["1m","2m","3m","5z","5z"]
function splitMpsz(text) {
  const out = [];
  let digits = [];
  for (const ch of text) {
    if (/[0-9]/.test(ch)) digits.push(ch);
    else { for (const d of digits) out.push(d + ch); digits = []; }
  }
  return out;
}

function drawChart(sessions, started) {
  const svg = document.getElementById("chart");
  const legend = document.getElementById("legend");
  svg.replaceChildren();
  legend.replaceChildren();
  const series = sessions.filter((s) => s.points && s.points.length);
  if (!series.length) {
    const t = document.createElementNS("http://www.w3.org/2000/svg", "text");
    t.setAttribute("x", 20); t.setAttribute("y", 120); t.textContent = "no finished game yet";
    svg.append(t);
    return;
  }
  const all = series.flatMap((s) => s.points);
  const t0 = Math.min(started, ...all.map((p) => p[0])), t1 = Math.max(...all.map((p) => p[0]));
  const lo = Math.min(0, ...all.map((p) => p[1])), hi = Math.max(0, ...all.map((p) => p[1]));
  const x = (t) => 50 + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * 730;
  const y = (v) => 220 - (hi > lo ? (v - lo) / (hi - lo) : 0.5) * 200;
  const ns = "http://www.w3.org/2000/svg";
  const zero = document.createElementNS(ns, "line");
  Object.entries({ x1: 50, x2: 780, y1: y(0), y2: y(0), stroke: "#999", "stroke-dasharray": "4 3" })
    .forEach(([k, v]) => zero.setAttribute(k, v));
  svg.append(zero);
  for (const [label, value] of [[hi, hi], [lo, lo]]) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", 4); t.setAttribute("y", y(value) + 4); t.setAttribute("font-size", 11);
    t.textContent = Math.round(label);
    svg.append(t);
  }
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const line = document.createElementNS(ns, "polyline");
    const points = [[t0, 0], ...s.points];  // every session starts at 0 when the process did
    line.setAttribute("points", points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "));
    line.setAttribute("fill", "none"); line.setAttribute("stroke", colour); line.setAttribute("stroke-width", 2);
    line.setAttribute("data-session", s.name);
    svg.append(line);
    legend.append(el("span", {}, el("i", { style: { background: colour } }), `${s.name} ${s.points.at(-1)[1]}`));
  });
}

async function refresh() {
  try {
    const status = await getJSON("/api/status");
    const sessions = Object.values(status.sessions);
    document.querySelector("#sessions tbody").replaceChildren(...sessions.map(sessionRow));
    const live = sessions.filter((s) => s.current);
    const liveBox = document.getElementById("live");
    if (live.length) liveBox.replaceChildren(...live.map((s) => liveBlock(s.name, s.current)));
    else liveBox.replaceChildren("none");
    drawChart(sessions, Date.now() / 1000 - status.uptime);
    document.querySelector("#results tbody").replaceChildren(...status.results.map((r) => el("tr", {},
      el("td", { text: fmtTime(r.ended) }), el("td", { text: r.session }), el("td", { text: r.seat }),
      el("td", { text: (r.scores || []).join(" / ") }), el("td", { text: r.points ?? "" }),
      el("td", { text: r.ranks ? r.ranks[r.seat] : "" }), el("td", { text: r.hands ?? "" }),
      el("td", {}, logLink(r.log)))));
    const logs = status.logs || {};
    document.getElementById("warnings").textContent = [
      logs.low_disk,
      logs.last_error ? "log upkeep: " + logs.last_error.error : null,
    ].filter(Boolean).join(" · ");
    document.getElementById("updated").textContent =
      `${status.status}${status.reload_error ? " (reload refused: " + status.reload_error.error + ")" : ""}` +
      ` · up ${Math.round(status.uptime)} s · updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    document.getElementById("updated").textContent = "cannot reach the server: " + error.message;
  }
}

linkTokens();
refresh();
setInterval(refresh, 2000);
