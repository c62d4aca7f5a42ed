// The game list: /api/games, filtered as you type.
"use strict";

let GAMES = [];

function row(g) {
  const players = g.players ? g.players.join(", ") : (g.policy || "");
  const source = g.own ? (g.platform || "?") : "import";
  return el("tr", { "data-id": g.id },
    el("td", { text: fmtTime(g.mtime) }), el("td", { text: g.folder }),
    el("td", {}, el("a", { href: withToken("/games/" + encodeURIComponent(g.id)), text: g.name })),
    el("td", { text: source }), el("td", { text: g.variant || "" }), el("td", { text: players }),
    el("td", { text: Math.ceil(g.size / 1024) + " KB" }));
}

function show() {
  const needle = document.getElementById("filter").value.toLowerCase();
  const shown = GAMES.filter((g) => !needle || JSON.stringify(g).toLowerCase().includes(needle));
  document.querySelector("#games tbody").replaceChildren(...shown.map(row));
  document.getElementById("count").textContent = `${shown.length} of ${GAMES.length} games`;
}

async function load() {
  try {
    GAMES = (await getJSON("/api/games")).games;
    show();
  } catch (error) {
    document.getElementById("count").textContent = "cannot list the games: " + error.message;
  }
}

linkTokens();
document.getElementById("filter").addEventListener("input", show);
load();
