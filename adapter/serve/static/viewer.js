// The replay viewer: the game's outline, then one hand's steps at a time (snapshots built by
// the server), drawn as a table seen from our seat.
"use strict";

const GAME_ID = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1]);
const WIND = "ESWN";
const view = { outline: null, hand: 0, step: 0, steps: [], cache: new Map(), subtitles: new Map() };

function seatName(seat, step) {
  const names = view.outline.names || [];
  const wind = WIND[(seat - step.dealer + 4) % 4];
  const name = names[seat] || (view.outline.players ? view.outline.players[seat] : "");
  return `${wind} · seat ${seat}${name ? " · " + name : ""}`;
}

function drawSeat(box, seat, step) {
  const s = step.seats[seat];
  const ours = view.outline.our_seat === seat;
  box.className = "seat " + box.id.replace("seat-", "pos-") + (step.actor === seat ? " actor" : "") + (ours ? " ours" : "");
  box.dataset.seat = seat;
  const river = el("div", { class: "river" }, s.river.map((d) => tileNode(d.t,
    [d.tsumogiri ? "tsumogiri" : "", d.riichi ? "riichi" : "", d.called ? "called" : ""].join(" ").trim())));
  const hand = s.hand ? tileRow(s.hand) : tileRow(Array(s.hidden).fill("?"));
  const winning = step.result && step.result.type === "win" && step.result.winner === seat;
  const drawn = s.drawn ? tileNode(s.drawn, winning ? "win" : "drawn") : null;
  box.replaceChildren(...[
    el("h3", {}, el("span", { text: seatName(seat, step) }),
      s.riichi ? el("span", { class: "riichi-flag", text: "riichi" }) : null,
      el("span", { class: "score", text: step.scores[seat] })),
    el("div", { class: "row hand" }, hand, drawn),
    s.melds.length ? el("div", { class: "row melds" }, s.melds.map((m) =>
      el("span", { class: "meld", title: m.kind }, tileRow(m.tiles, "small"), " "))) : null,
    s.flowers.length ? el("div", { class: "row" }, "flowers ", tileRow(s.flowers, "small")) : null,
    river].filter(Boolean));
}

function drawCenter(step) {
  document.getElementById("center").replaceChildren(
    el("div", { class: "round", text: `${step.round}-${step.honba}` }),
    el("div", {}, `sticks ${step.sticks}` + (step.wall !== null && step.wall !== undefined ? ` · wall ${step.wall}` : "")),
    el("div", { class: "row" }, "dora ", tileRow(step.dora, "small")));
}

function drawResult(step) {
  const box = document.getElementById("result");
  const r = step.result;
  if (!r) { box.replaceChildren(); return; }
  const text = r.type === "win"
    ? `seat ${r.winner} wins ${r.from === null ? "by tsumo" : "on seat " + r.from + "'s discard"}: ${r.win_tile}, value ${r.value}` +
      (r.detail ? ` (${r.detail})` : "") + (r.yaku.length ? " · " + r.yaku.join(", ") : "")
    : `drawn: ${r.reason}` + (r.tenpai && r.tenpai.length ? ` · ready: seat ${r.tenpai.join(", ")}` : "");
  box.replaceChildren(el("div", { class: "result" }, text, el("div", { class: "muted", text: "score changes " + r.deltas.join(" / ") })));
}

function drawDecisions(step) {
  const box = document.getElementById("decisions");
  box.replaceChildren(...step.decisions.map((d) => {
    // bar length: the best candidate longest, the worst shortest (scores may be negative)
    const scores = d.candidates.map((c) => c[1]);
    const hi = Math.max(...scores), lo = Math.min(...scores);
    const width = (score) => (hi > lo ? 10 + 90 * (score - lo) / (hi - lo) : 100);
    return el("div", { class: "decision", "data-seat": d.seat },
      el("div", {}, el("b", { text: `seat ${d.seat} ${d.kind}: ${d.action}` }),
        ` · ${d.policy} · ${d.elapsed_ms} ms · ${d.legal} legal`,
        d.fallback ? el("span", { class: "error", text: " · fallback: " + d.fallback }) : null),
      d.candidates.map(([action, score]) => el("div", { class: "cand" + (action === d.action ? " chosen" : "") },
        el("span", { text: action }),
        el("span", {}, el("div", { class: "bar", style: { width: `${width(score)}%` } })),
        el("span", { text: score }))));
  }));
}

// the commentary (one sentence per move, /api/games/ID/commentary) on the step of the move
function drawSubtitles() {
  const rows = view.subtitles.get(`${view.hand}:${view.step}`) || [];
  document.getElementById("subtitles").replaceChildren(...rows.map((r) =>
    el("div", { class: "subtitle", "data-seat": r.seat, "data-factor": r.factor },
      el("span", { text: r.sentence }),
      el("span", { class: "muted", text: ` · predicted ${r.predicted.join(", ")}${r.hit ? " ✓" : ""}` }))));
}

async function loadSubtitles() {
  try {
    const data = await getJSON(`/api/games/${encodeURIComponent(GAME_ID)}/commentary`);
    for (const r of data.subtitles) {
      const key = `${r.hand}:${r.step}`;
      if (!view.subtitles.has(key)) view.subtitles.set(key, []);
      view.subtitles.get(key).push(r);
    }
    drawSubtitles();
  } catch (error) {
    document.getElementById("subtitles").textContent = "no commentary: " + error.message;
  }
}

function draw() {
  const step = view.steps[view.step];
  if (!step) return;
  const bottom = view.outline.our_seat ?? 0;
  const places = { bottom, right: (bottom + 1) % 4, top: (bottom + 2) % 4, left: (bottom + 3) % 4 };
  for (const [place, seat] of Object.entries(places)) drawSeat(document.getElementById("seat-" + place), seat, step);
  drawCenter(step);
  drawResult(step);
  drawDecisions(step);
  drawSubtitles();
  document.getElementById("step-text").textContent = step.text;
  document.getElementById("step-index").textContent = `step ${view.step + 1} / ${view.steps.length}`;
  document.getElementById("slider").max = view.steps.length - 1;
  document.getElementById("slider").value = view.step;
  document.getElementById("hand-select").value = view.hand;
}

async function openHand(index, atEnd) {
  const hands = view.outline.hands;
  if (index < 0 || index >= hands.length) return;
  if (!view.cache.has(index)) {
    view.cache.set(index, await getJSON(`/api/games/${encodeURIComponent(GAME_ID)}/hands/${index}`));
  }
  view.hand = index;
  view.steps = view.cache.get(index).steps;
  view.step = atEnd ? view.steps.length - 1 : 0;
  draw();
}

async function move(delta) {
  const target = view.step + delta;
  if (target >= 0 && target < view.steps.length) { view.step = target; draw(); }
  else if (target >= view.steps.length) await openHand(view.hand + 1, false);
  else await openHand(view.hand - 1, true);
}

function keys(event) {
  if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
  const actions = {
    ArrowRight: () => move(1), ArrowLeft: () => move(-1),
    ArrowDown: () => openHand(view.hand + 1, false), PageDown: () => openHand(view.hand + 1, false),
    ArrowUp: () => openHand(view.hand - 1, false), PageUp: () => openHand(view.hand - 1, false),
    Home: () => { view.step = 0; draw(); }, End: () => { view.step = view.steps.length - 1; draw(); },
  };
  if (actions[event.key]) { event.preventDefault(); actions[event.key](); }
}

async function start() {
  linkTokens();
  try {
    view.outline = await getJSON(`/api/games/${encodeURIComponent(GAME_ID)}`);
  } catch (error) {
    document.getElementById("game-info").textContent = "cannot open this game: " + error.message;
    return;
  }
  const o = view.outline;
  const players = (o.names || []).some(Boolean) ? o.names : (o.players || []);
  document.getElementById("game-info").textContent =
    `${o.source} · ${o.variant} · ${players.join(", ")}` + (o.started ? ` · ${o.started}` : "") +
    (o.final_scores ? ` · final ${o.final_scores.join(" / ")}` : "");
  document.title = `mjbot — ${GAME_ID.split("~").at(-1)}`;
  document.getElementById("exports").replaceChildren(...o.exports.map((fmt) =>
    el("a", { href: withToken(`/games/${encodeURIComponent(GAME_ID)}/export/${fmt}`), "data-export": fmt }, `export ${fmt}`)));
  document.getElementById("notes").textContent = (o.notes || []).join(" · ");
  const select = document.getElementById("hand-select");
  select.replaceChildren(...o.hands.map((h, i) => el("option", { value: i },
    `${h.label}${h.decisions ? " (" + h.decisions + " decisions)" : ""}`)));
  select.addEventListener("change", () => openHand(Number(select.value), false));
  document.getElementById("prev").addEventListener("click", () => move(-1));
  document.getElementById("next").addEventListener("click", () => move(1));
  document.getElementById("prev-hand").addEventListener("click", () => openHand(view.hand - 1, false));
  document.getElementById("next-hand").addEventListener("click", () => openHand(view.hand + 1, false));
  document.getElementById("slider").addEventListener("input", (e) => { view.step = Number(e.target.value); draw(); });
  document.addEventListener("keydown", keys);
  if (o.hands.length) await openHand(0, false);
  else document.getElementById("step-text").textContent = "this file holds no hand";
  loadSubtitles();
}

start();
