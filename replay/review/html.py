"""The review as one self-contained HTML page: the summary, the costliest decisions with
their situation, and every decision with every action's value."""

from __future__ import annotations

from html import escape
from typing import Any

from replay.replayer import fallback_text
from replay.review.game import kind_text, or_na

_STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:70em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;
text-align:left;vertical-align:top}tr.x{background:#fde8e8}.m{font-family:monospace}"""


def _cell(value: Any) -> str:
    return f"<td>{escape('' if value is None else str(value))}</td>"


def played(row: dict[str, Any]) -> str:
    """What was played, and where our own log's policy fell back, why (replay's words)."""
    fallback = row.get("fallback")
    return str(row["played"]) + (f" (FALLBACK {fallback_text(fallback)})" if fallback else "")


def render(result: dict[str, Any]) -> str:
    unit = "points" if result["unit"] == "points" else "ranks (0 best, 1 worst)"
    pct = "n/a" if result["agreement"] is None else f"{100 * result['agreement']:.1f}%"
    out = ["<!doctype html><html><head><meta charset='utf-8'>",
           f"<title>review: {escape(result['path'])}</title><style>{_STYLE}</style></head>",
           f"<body><h1>Review of {escape(result['path'])}</h1>",
           f"<p>{escape(result['source'])}, {escape(result['variant'])}, seat "
           f"{result['seat']}, policy <b>{escape(result['policy'])}</b></p><table>"]
    valued = result["loss_per_decision"] is not None
    for name, value in (("decisions", result["decisions"]),
                        *([("forced (one legal action, not rated)",
                            result["forced_decisions"])] if result.get("forced_decisions")
                          else []),
                        ("agreement", f"{result['agree']}/{result['decisions']} ({pct})"),
                        ("expected loss (total)",
                         f"{result['total_loss']} {unit}" if valued else "n/a"),
                        ("expected loss per decision",
                         f"{result['loss_per_decision']} {unit}" if valued else "n/a"),
                        ("rating", or_na(result["rating"])),
                        *([("fallbacks", f"{result['fallbacks']} ("
                            + ", ".join(f"{k} {n}" for k, n in result["fallback_kinds"].items())
                            + f"), loss on them {result['fallback_loss']:g}")]
                          if result.get("fallbacks") else [])):
        out.append(f"<tr><th>{escape(name)}</th>{_cell(value)}</tr>")
    out.append("</table>")
    out += [f"<p>note: {escape(n)}</p>" for n in result["notes"]]
    if result["costly"]:
        out.append("<h2>The costliest decisions</h2><table><tr><th>round</th><th>kind</th>"
                   "<th>hand</th><th>played</th><th>best</th><th>loss</th><th>waits</th>"
                   "<th>dangerous</th></tr>")
    for r in result["costly"]:
        s = r["situation"]
        waits = s.get("waits") or "; ".join(f"{k}: {v}" for k, v in
                                            s.get("ready_after", {}).items())
        danger = ", ".join(f"seat {t['seat']}{' riichi' if t['riichi'] else ''} "
                           f"P(ready) {t['p_ready']:.2f}" for t in s["dangerous"])
        out.append(f"<tr>{_cell(r['round'])}{_cell(kind_text(r))}<td class=m>"
                   f"{escape(s['hand'])} (shanten {s['shanten']})</td>{_cell(played(r))}"
                   f"{_cell(r['best'])}{_cell(r['loss'])}{_cell(waits)}{_cell(danger)}</tr>")
    if result["costly"]:
        out.append("</table>")
    out.append("<h2>Every decision</h2><table><tr><th>#</th><th>round</th>"
               "<th>kind</th><th>hand</th><th>played</th><th>best</th><th>loss</th>"
               "<th>actions (value)</th></tr>")
    for r in result["rows"]:
        actions = ", ".join(a["action"] + ("" if a["value"] is None else f" ({a['value']:g})")
                            + (f" [deal-in {100 * a['deal_in']:.0f}%]" if a.get("deal_in")
                               else "") for a in r["actions"])
        cls = "" if r["agree"] else " class=x"
        out.append(f"<tr{cls}>{_cell(r['n'])}{_cell(r['round'])}{_cell(kind_text(r))}"
                   f"<td class=m>{escape(r['hand'])}</td>{_cell(played(r))}"
                   f"{_cell(r['best'])}{_cell(r['loss'])}{_cell(actions)}</tr>")
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"
