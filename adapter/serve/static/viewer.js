// The replay viewer: the game's outline, then one hand's steps at a time (snapshots built by
// the server), drawn as a table seen from our seat. The address's fragment names the hand and
// step shown (#3/12: the third hand, step 12, as the page numbers them), so that a step can
// be linked to; it follows every move.
"use strict";

const GAME_ID = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1]);
// ?seat=N (0 to 3): the table drawn from that seat, e.g. an outside bot's in a local-table
// game, which has no seat of ours (drawn from seat 0 otherwise)
const ASKED_SEAT = (() => {
  const asked = new URLSearchParams(location.search).get("seat");
  return /^[0-3]$/.test(asked || "") ? Number(asked) : null;
})();
const WIND = "ESWN";
const view = {
  outline: null, hand: 0, step: 0, steps: [], cache: new Map(), subtitles: new Map(), skipped: new Map(),
  commentary: "loading",  // then "ready" or "failed: ..."
  handError: "",  // the last hand that could not be shown, as the page says it
};

function seatName(seat, step) {
  // the hand's own players: a match log's clients move between its games (ntpu-server)
  const hand = view.outline.hands[view.hand] || {};
  const names = (hand.names || []).some(Boolean) ? hand.names : (view.outline.names || []);
  const wind = WIND[(seat - step.dealer + 4) % 4];
  const name = names[seat] || (view.outline.players ? view.outline.players[seat] : "");
  return `${wind} · seat ${seat}${name ? " · " + name : ""}`;
}

function drawSeat(box, seat, step) {
  const s = step.seats[seat];
  const ours = view.outline.our_seat === seat;
  box.className = "seat " + box.id.replace("seat-", "pos-") + (step.actor === seat ? " actor" : "") + (ours ? " ours" : "");
  box.dataset.seat = seat;
  const river = el("div", { class: "river-box" }, el("div", { class: "label", text: "river" }),
    el("div", { class: "river" }, s.river.map((d) => tileNode(d.t,
      ["small", d.tsumogiri ? "tsumogiri" : "", d.riichi ? "riichi" : "", d.called ? "called" : ""].join(" ").trim()))));
  const hand = s.hand ? tileRow(s.hand) : tileRow(Array(s.hidden).fill("?"));
  const winning = step.result && step.result.type === "win" && step.result.winner === seat;
  const drawn = s.drawn ? tileNode(s.drawn, winning ? "win" : "drawn") : null;
  box.replaceChildren(...[
    el("h3", {}, el("span", { text: seatName(seat, step) }),
      s.riichi ? el("span", { class: "riichi-flag", text: "riichi" }) : null,
      el("span", { class: "score", text: step.scores[seat] })),
    el("div", { class: "row hand" }, hand, drawn),
    s.melds.length ? el("div", { class: "row melds" }, el("span", { class: "label", text: "melds" }),
      s.melds.map((m) => el("span", { class: "meld", title: m.kind }, tileRow(m.tiles, "small"), " "))) : null,
    s.flowers.length ? el("div", { class: "row flowers" }, el("span", { class: "label", text: "flowers" }),
      tileRow(s.flowers, "small")) : null,
    river].filter(Boolean));
}

function drawCenter(step) {
  // MCR and Taiwan have no dora and no riichi sticks: no empty row, no "sticks 0", for them
  const riichi = view.outline.variant === "riichi";
  const dora = riichi || step.dora.length > 0;
  const counts = [riichi || step.sticks ? `sticks ${step.sticks}` : null,
    step.wall !== null && step.wall !== undefined ? `wall ${step.wall}` : null].filter(Boolean);
  document.getElementById("center").replaceChildren(...[
    el("div", { class: "round", text: `${step.round}-${step.honba}` }),
    el("div", {}, counts.join(" · ")),
    dora ? el("div", { class: "row dora" }, "dora ", tileRow(step.dora, "small")) : null].filter(Boolean));
}

function drawResult(step) {
  const box = document.getElementById("result");
  const r = step.result;
  if (!r) { box.replaceChildren(); return; }
  // a double ron: the wins on the same discard before this one stay in view with it
  box.replaceChildren(...[...(r.earlier || []), r].map((one) => resultBlock(one, step)));
}

function resultBlock(r, step) {
  const english = r.yaku_en || [];
  const text = r.type === "win"
    ? withTiles(`seat ${r.winner} wins ${r.from === null ? "by tsumo" : "on seat " + r.from + "'s discard"}: ${r.win_tile}, value ${r.value}` +
      (r.detail ? ` (${r.detail})` : "") +
      // 責任払い: the seat that fed the last dragon / wind set pays (all of a tsumo)
      (r.pao !== null && r.pao !== undefined ? ` · pao: seat ${r.pao} liable` : ""))
    : r.type === "penalty" ? [`ended: ${r.reason}`]
    : [`drawn: ${r.reason}` + (r.tenpai && r.tenpai.length ? ` · ready: seat ${r.tenpai.join(", ")}` : "")];
  const yaku = r.type === "win" && r.yaku.length ? el("div", { class: "yaku-list" }, r.yaku.map((y, i) =>
    el("span", { class: "yaku" }, y, english[i] ? el("span", { class: "en", text: english[i] }) : null))) : null;
  // the ura dora indicators turned over for a riichi winner (a record keeps them for the hand;
  // a winner without riichi never sees them), as Tenhou shows them beside the yaku
  const ura = r.type === "win" && r.ura && r.ura.length && step.seats[r.winner].riichi
    ? el("div", { class: "row ura" }, "ura dora ", tileRow(r.ura, "small")) : null;
  return el("div", { class: "result" }, ...text, yaku, ura,
    el("div", { class: "muted", text: "score changes " + r.deltas.join(" / ") }));
}

// what the log says beside the table (an NTPU win's value by our rules, the referee's
// illegal-action notices, a Tenhou reconnect): the hand's, each linked to the step it follows
function drawNotices() {
  const box = document.getElementById("notices");
  const notices = (view.outline.hands[view.hand] || {}).notices || [];
  box.replaceChildren(...(notices.length ? [el("div", { class: "muted", text: "notices in this hand" })] : []),
    ...notices.map((n) => el("div", { class: "notice" + (n.step === view.step ? " here" : ""), "data-step": n.step },
      el("a", { href: `#${view.hand + 1}/${n.step + 1}`, text: `step ${n.step + 1}` }), " " + n.text)));
}

function drawDecisions(step) {
  const box = document.getElementById("decisions");
  box.replaceChildren(...step.decisions.map((d) => {
    // bar length: the best candidate longest, the worst shortest (scores may be negative)
    const scores = d.candidates.map((c) => c[1]);
    const hi = Math.max(...scores), lo = Math.min(...scores);
    const width = (score) => (hi > lo ? 10 + 90 * (score - lo) / (hi - lo) : 100);
    return el("div", { class: "decision", "data-seat": d.seat },
      el("div", {}, el("b", {}, withTiles(`seat ${d.seat} ${d.kind}: ${d.action}`)),
        ` · ${d.policy} · ${d.elapsed_ms} ms · ${d.legal} legal`,
        // its kind (late, failed, ...) where the log records it (not in logs from before it was)
        d.fallback ? el("span", { class: "error", "data-fallback-kind": d.fallback_kind || "",
          text: ` · fallback${d.fallback_kind ? ` (${d.fallback_kind})` : ""}: ${d.fallback}` }) : null),
      d.candidates.map(([action, score]) => el("div", { class: "cand" + (action === d.action ? " chosen" : "") },
        el("span", {}, withTiles(action)),
        el("span", {}, el("div", { class: "bar", style: { width: `${width(score)}%` } })),
        el("span", { text: score }))));
  }));
}

// the commentary (one sentence per move, /api/games/ID/commentary) on the step of the move
function drawSubtitles() {
  const box = document.getElementById("subtitles");
  box.dataset.state = view.commentary.split(":")[0];
  if (view.commentary !== "ready") {
    box.replaceChildren(el("div", { class: "muted hint", text: view.commentary === "loading"
      ? "commentary loading… (the first time a game is opened it is worked out move by move)"
      : "no commentary: " + view.commentary.slice("failed: ".length) }));
    return;
  }
  const skipped = view.skipped.get(view.hand);  // a damaged hand: the others have theirs
  if (skipped) {
    box.replaceChildren(el("div", { class: "muted hint", text: skipped }));
    return;
  }
  const rows = view.subtitles.get(`${view.hand}:${view.step}`) || [];
  box.replaceChildren(...rows.map((r) =>
    el("div", { class: "subtitle", "data-seat": r.seat, "data-factor": r.factor },
      el("span", {}, withTiles(r.sentence)),
      el("span", { class: "muted" }, withTiles(r.no_prediction ? " · no prediction (the policy gave no answer on this move)"
        : r.hit === null ? " · no prediction (the hand cannot be measured)"
        : ` · predicted ${r.predicted.join(", ")}${r.hit ? " ✓" : ""}`)))));
}

async function loadSubtitles() {
  try {
    const data = await getJSON(`/api/games/${encodeURIComponent(GAME_ID)}/commentary`);
    for (const r of data.subtitles) {
      const key = `${r.hand}:${r.step}`;
      if (!view.subtitles.has(key)) view.subtitles.set(key, []);
      view.subtitles.get(key).push(r);
    }
    for (const s of data.skipped || []) if (s.hand !== null) view.skipped.set(s.hand, s.note);
    view.commentary = "ready";
  } catch (error) {
    view.commentary = "failed: " + error.message;
  }
  drawSubtitles();
}

// a damaged hand (its file could not be read there, or the table cannot follow its moves):
// the note `mjbot replay` gives of it, above the table while that hand is shown
function drawDamage(index) {
  const box = document.getElementById("hand-damage");
  const note = (view.cache.get(index) || {}).damaged || (view.outline.hands[index] || {}).damaged || "";
  box.textContent = note;
  box.hidden = !note;
}

function draw() {
  const step = view.steps[view.step];
  if (!step) return;
  drawDamage(view.hand);
  const bottom = ASKED_SEAT ?? view.outline.our_seat ?? 0;
  const places = { bottom, right: (bottom + 1) % 4, top: (bottom + 2) % 4, left: (bottom + 3) % 4 };
  for (const [place, seat] of Object.entries(places)) drawSeat(document.getElementById("seat-" + place), seat, step);
  drawCenter(step);
  drawResult(step);
  drawNotices();
  drawDecisions(step);
  drawSubtitles();
  document.getElementById("step-text").replaceChildren(...withTiles(step.text));
  document.getElementById("step-index").textContent = `step ${view.step + 1} / ${view.steps.length}`;
  history.replaceState(null, "", `#${view.hand + 1}/${view.step + 1}`);
  document.getElementById("slider").max = view.steps.length - 1;
  document.getElementById("slider").value = view.step;
  document.getElementById("hand-select").value = view.hand;
}

async function openHand(index, atEnd, step) {
  const hands = view.outline.hands;
  if (index < 0 || index >= hands.length) return;
  if (!view.cache.has(index)) {
    try {
      view.cache.set(index, await getJSON(`/api/games/${encodeURIComponent(GAME_ID)}/hands/${index}`));
    } catch (error) {  // said, the hand shown before (if any) kept on the table and in the list
      view.handError = `cannot show hand ${index + 1}: ` + error.message;
      drawDamage(index);  // a damaged hand's note: what was damaged (the 422 says only that)
      document.getElementById("link-note").textContent = view.handError;
      if (view.steps) document.getElementById("hand-select").value = view.hand;
      return;
    }
  }
  const note = document.getElementById("link-note");
  if (view.handError && note.textContent === view.handError) note.textContent = "";
  const option = document.querySelectorAll("#hand-select option")[index];
  // a hand only its seats' tables refuse is known damaged once it is opened: listed so too
  if (view.cache.get(index).damaged && option && !option.textContent.includes(" · damaged")) {
    option.textContent += " · damaged";
  }
  view.hand = index;
  view.steps = view.cache.get(index).steps;
  view.step = step !== undefined ? step : (atEnd ? view.steps.length - 1 : 0);
  draw();
}

// #H/S (both counted from 1, as the page shows them): that hand and step; a fragment that
// names none is said in one line and the first step shown
async function openLinked() {
  const note = document.getElementById("link-note");
  note.textContent = "";
  let hash = location.hash.slice(1);
  try { hash = decodeURIComponent(hash); } catch (error) { /* shown as typed */ }
  if (!hash) return openHand(0, false);
  const found = /^(\d+)(?:\/(\d+))?$/.exec(hash);
  const hands = view.outline.hands;
  if (!found || Number(found[1]) < 1 || Number(found[1]) > hands.length) {
    note.textContent = `no hand ${JSON.stringify(hash)} here (links read #HAND/STEP, hands 1 to ${hands.length}): showing the first step`;
    return openHand(0, false);
  }
  const index = Number(found[1]) - 1;
  const steps = hands[index].steps;
  const step = found[2] === undefined ? 1 : Number(found[2]);
  if (step < 1 || step > steps) {
    note.textContent = `hand ${index + 1} has steps 1 to ${steps}, not ${step}: showing its first step`;
    return openHand(index, false, 0);
  }
  return openHand(index, false, step - 1);
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
    // nothing will come: the subtitles' "commentary loading…" stayed under the error for good
    view.commentary = "failed: the game cannot be opened";
    drawSubtitles();
    return;
  }
  const o = view.outline;
  const players = (o.names || []).some(Boolean) ? o.names : (o.players || []);
  // a record without player names (a Botzone import) shows none, not a row of empty commas
  const who = players.some(Boolean) ? ` · ${players.map((p, i) => p || `seat ${i}`).join(", ")}` : "";
  document.getElementById("game-info").textContent =
    `${o.source ?? "source unreadable"} · ${o.variant}${who}` + (o.started ? ` · ${o.started}` : "") +
    (o.final_scores ? ` · final ${o.final_scores.join(" / ")}` : "");
  document.title = `mjbot — ${GAME_ID.split("~").at(-1)}`;
  document.getElementById("exports").replaceChildren(...o.exports.map((fmt) =>
    el("a", { href: withToken(`/games/${encodeURIComponent(GAME_ID)}/export/${fmt}`), "data-export": fmt,
              onclick: exportGame }, `export ${fmt}`)));
  document.getElementById("notes").textContent = (o.notes || []).join(" · ");
  const select = document.getElementById("hand-select");
  select.replaceChildren(...o.hands.map((h, i) => el("option", { value: i },
    `${i + 1}. ${h.label}${h.decisions ? " (" + h.decisions + " decisions)" : ""}` +
    (h.damaged ? " · damaged" : "") +
    (h.notices && h.notices.length ? ` · ${h.notices.length} notice${h.notices.length > 1 ? "s" : ""}` : ""))));
  select.addEventListener("change", () => openHand(Number(select.value), false));
  document.getElementById("prev").addEventListener("click", () => move(-1));
  document.getElementById("next").addEventListener("click", () => move(1));
  document.getElementById("prev-hand").addEventListener("click", () => openHand(view.hand - 1, false));
  document.getElementById("next-hand").addEventListener("click", () => openHand(view.hand + 1, false));
  document.getElementById("slider").addEventListener("input", (e) => { view.step = Number(e.target.value); draw(); });
  document.addEventListener("keydown", keys);
  window.addEventListener("hashchange", () => { if (o.hands.length) openLinked(); });
  drawSubtitles();  // the hint, while the commentary is worked out
  const commentary = loadSubtitles();
  if (o.hands.length) await openLinked();
  else document.getElementById("step-text").textContent = "this file holds no hand";
  await commentary;
}

start();

// An export is fetched, not followed, so that what it cannot hold is said on the page: a cut
// or damaged game's X-Mjbot-Export-Note (the lines `mjbot replay --export` prints on stderr),
// where the download came with no word and passed for a whole game; then it is saved.
async function exportGame(event) {
  event.preventDefault();
  const link = event.currentTarget;
  const note = document.getElementById("export-note");
  note.textContent = `export ${link.dataset.export}: …`;
  let response;
  try {
    response = await fetchPatiently(link.href);  // a busy viewer asked again, as every request
  } catch (error) {
    note.textContent = `export ${link.dataset.export}: ${error}`;
    return;
  }
  if (!response.ok) {
    note.textContent = `export ${link.dataset.export}: ${response.status} ${await response.text()}`;
    return;
  }
  const notes = JSON.parse(response.headers.get("X-Mjbot-Export-Note") || "[]");
  note.textContent = notes.length ? `export ${link.dataset.export}: ${notes.join(" · ")}` : "";
  const named = /filename\*=UTF-8''([^;]+)/.exec(response.headers.get("Content-Disposition") || "");
  const save = el("a", { href: URL.createObjectURL(await response.blob()),
                         download: named ? decodeURIComponent(named[1]) : "export" });
  save.click();
  setTimeout(() => URL.revokeObjectURL(save.href), 60000);
}
