// The game list: /api/games a page at a time (newest first), filtered on the server as you
// type; each of our logs shows our seat and the result (our rank and score, or in progress).
"use strict";

const PAGE = 50;
// asking: the request in flight, aborted by the next one (a filter typed on, a page turned):
// the server gives up its scan, and an older answer arriving late cannot replace a newer one
// rereads: how many more times the page is asked again by itself (below)
const list = { offset: 0, query: "", matched: 0, timer: null, asking: null, reread: null, rereads: 0 };
const REREADS = 5;  // a page whose finished logs are still to be read whole is asked again
const REREAD_MS = 2000;
const ORDINAL = ["", "1st", "2nd", "3rd", "4th"];

function result(g) {
  if (!g.own) return "";
  if (g.unreadable) return "damaged: the viewer cannot open it";
  // a frame damaged before the footer: the game opens cut there (the server read it whole);
  // unchecked: the server's reading process died on it (no word on damage either way)
  return outcome(g) + (g.damaged ? " · damaged" : g.unchecked ? " · not checked" : "");
}

function outcome(g) {
  // a Botzone bot is never told how its match ended: its log has no footer, ever
  if (g.finished === false && g.platform === "botzone") return "no footer: Botzone tells the bot no result";
  if (g.finished === false) return "in progress / no footer";
  if (g.unfinished) return "unfinished: " + g.unfinished;
  if (g.our_rank) return `${ORDINAL[g.our_rank] || g.our_rank} · ${g.our_score}`;
  return g.scores ? g.scores.join(" / ") : "";
}

function seat(g) {
  if (g.our_seat === null || g.our_seat === undefined) return "";
  const who = g.players ? g.players[g.our_seat] : g.policy;
  return `seat ${g.our_seat}` + (who ? ` · ${who}` : "");
}

// a game with no seat of ours (the local table's): each player links to the game drawn
// from its seat
function playersCell(g) {
  if (!g.players) return el("td", { text: g.policy || "" });
  if (g.our_seat !== null && g.our_seat !== undefined) return el("td", { text: g.players.join(", ") });
  const game = "/games/" + encodeURIComponent(g.id);
  return el("td", {}, ...g.players.flatMap((name, seat) => [seat ? ", " : "",
    el("a", { href: withToken(`${game}?seat=${seat}`), title: `from seat ${seat}`, text: name })]));
}

function row(g) {
  const source = g.own ? (g.platform || "?") : "import";
  return el("tr", { "data-id": g.id },
    el("td", { text: fmtTime(g.mtime) }), el("td", { text: g.folder }),
    // a log whose header the reader refuses opens as an error: listed as it opens, no link
    el("td", {}, g.own && g.unreadable
      ? el("span", { class: "error", title: "its header is damaged or missing", text: g.name })
      : el("a", { href: withToken("/games/" + encodeURIComponent(g.id)), text: g.name })),
    el("td", { text: source }), el("td", { text: g.variant || "" }), playersCell(g),
    el("td", { class: "our-seat", text: seat(g) }),
    el("td", { class: "result-cell" + (g.our_rank === 1 ? " first" : "") +
      (g.damaged || (g.own && g.unreadable) ? " damaged" : ""), title: g.damaged || g.unchecked || null,
      text: result(g) }),
    el("td", { text: Math.ceil(g.size / 1024) + " KB" }));
}

// auto: asked again by itself (the server was still reading the page's logs whole, to mark a
// damaged one), where a user's own ask (a filter, a page turned) starts the count again
async function load(auto) {
  clearTimeout(list.reread);
  if (!auto) list.rereads = REREADS;
  const params = new URLSearchParams({ offset: list.offset, limit: PAGE });
  if (list.query) params.set("q", list.query);
  if (list.asking) list.asking.abort();
  const asking = list.asking = new AbortController();
  try {
    const page = await getJSON("/api/games?" + params, asking.signal);
    list.matched = page.matched;
    document.querySelector("#games tbody").replaceChildren(...page.games.map(row));
    const last = page.offset + page.games.length;
    document.getElementById("page-info").textContent = page.matched
      ? `${page.offset + 1}–${last} of ${page.matched}` : "no game";
    // a listing holds the newest max_files games (matching ones, filtered): say so when older
    // ones were left out
    // a filter searched every game, not only the listed ones: where the unfiltered list was
    // cut, more than its total exist ("of 5000+"), not 5000
    document.getElementById("count").textContent = (list.query
      ? `${page.matched} of ${page.total}${page.total_cut ? "+" : ""} games match`
      : `${page.total} games`)
      + (!page.cut ? "" : list.query
        ? ` (only the newest ${page.max_files} matching games are listed: older ones match)`
        : ` (only the newest ${page.max_files} are listed: older games exist; the filter finds them)`);
    document.getElementById("prev-page").disabled = page.offset === 0;
    document.getElementById("next-page").disabled = last >= page.matched;
    if (page.unread && list.rereads > 0) {
      list.rereads--;
      list.reread = setTimeout(() => load(true), REREAD_MS);
    }
  } catch (error) {
    if (asking.signal.aborted) return;  // a newer request took its place
    document.getElementById("count").textContent = "cannot list the games: " + error.message;
  } finally {
    if (list.asking === asking) list.asking = null;
  }
}

function turn(delta) {
  const target = list.offset + delta * PAGE;
  if (target < 0 || target >= list.matched) return;
  list.offset = target;
  load();
}

linkTokens();
document.getElementById("filter").addEventListener("input", (event) => {
  clearTimeout(list.timer);
  list.timer = setTimeout(() => { list.query = event.target.value.trim(); list.offset = 0; load(); }, 200);
});
document.getElementById("prev-page").addEventListener("click", () => turn(-1));
document.getElementById("next-page").addEventListener("click", () => turn(1));
load();
