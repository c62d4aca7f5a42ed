// Shared by the dashboard and the viewer: the token (when the page was opened with ?token=),
// fetching JSON with it, links that keep it, and tiles drawn as small boxes.
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token");

function withToken(path) {
  if (!TOKEN) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(TOKEN);
}

// A 429 (this client's share of the viewer's builds queued) or a 503 (the viewer busy) that
// says when to ask again (Retry-After) is asked again then, up to BUSY_TRIES times, with a
// line on the page (#busy, its data-text where it has one) while it waits; past that, its
// error. The dashboard's 503 is the status server's (every connection busy), not the viewer's.
const BUSY_TRIES = 4;
const BUSY_WAIT_S = 30;  // the longest Retry-After waited for
let busyWaits = 0;

function showBusy(delta) {
  busyWaits += delta;
  const line = document.getElementById("busy");
  if (!line) return;
  line.hidden = busyWaits === 0;
  line.textContent = busyWaits ? line.dataset.text || "the viewer is busy, asking again…" : "";
}

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) { reject(signal.reason); return; }
    const timer = setTimeout(resolve, ms);
    if (signal) signal.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });
}

async function getJSON(path, signal) {
  const response = await fetchPatiently(path, signal);
  if (response.ok) return response.json();
  throw new Error(response.status + " " + (await response.text()));
}

// The response to path, a busy one (above) asked again after its Retry-After: getJSON's, and
// the viewer's exports' (the page fetches them, to show what they cannot hold).
async function fetchPatiently(path, signal) {
  const headers = TOKEN ? { Authorization: "Bearer " + TOKEN } : {};
  for (let tried = 0; ; tried++) {
    const response = await fetch(path, { headers, cache: "no-store", signal });
    const after = Number(response.headers.get("Retry-After") ?? NaN);
    if ((response.status === 429 || response.status === 503) && tried < BUSY_TRIES &&
        Number.isFinite(after) && after >= 0) {
      showBusy(1);
      try {
        await pause(Math.min(after, BUSY_WAIT_S) * 1000, signal);
      } finally {
        showBusy(-1);
      }
      continue;
    }
    return response;
  }
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "style") Object.assign(node.style, value);  // CSSOM: allowed by the CSP
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const HONOURS = { 1: "E", 2: "S", 3: "W", 4: "N", 5: "Wh", 6: "Gr", 7: "Rd" };

// one tile from its mpsz name ("5m", "0p" red five, "7z" red dragon, "3f" a flower, "?" hidden)
function tileNode(name, extra) {
  if (!name || name === "?") return el("span", { class: "tile back " + (extra || ""), title: "hidden" });
  const digit = name[0], suit = name[1];
  const label = suit === "z" ? HONOURS[digit] : (digit === "0" ? "5" : digit);
  const classes = ["tile", "s-" + suit];
  if (digit === "0") classes.push("red");
  if (suit === "z") classes.push("z" + digit);
  if (extra) classes.push(extra);
  return el("span", { class: classes.join(" "), title: name, "data-tile": name },
    el("b", { text: label }), suit === "z" ? null : el("i", { text: suit }));
}

function tileRow(names, extra) {
  return el("span", { class: "tiles" }, (names || []).map((n) => tileNode(n, extra)));
}

// text with its mpsz tiles ("discard 7z", "chi 345m") drawn as the tiles are on the table, so
// that the page has one notation: the list of text and tile nodes
const MPSZ = /\b(\d+)([mpszf])\b/g;
function withTiles(text) {
  const out = [];
  let last = 0;
  for (const found of String(text).matchAll(MPSZ)) {
    if (found.index > last) out.push(String(text).slice(last, found.index));
    out.push(el("span", { class: "tiles inline" },
      [...found[1]].map((digit) => tileNode(digit + found[2], "mini"))));
    last = found.index + found[0].length;
  }
  if (last < String(text).length) out.push(String(text).slice(last));
  return out;
}

function fmtTime(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString();
}

function linkTokens() {
  for (const a of document.querySelectorAll("a.tok")) a.href = withToken(a.getAttribute("href"));
}
