"""A whole game reviewed from one seat: each decision's actions ranked by a policy, the loss
of what was played, and a summary (agreement, expected loss, the costliest decisions, a
rating).

The rating is ``100 * exp(-mean loss per decision / scale)``: 100 for play the policy fully
agrees with; ``scale`` is a tenth of a typical win of the variant in points for ``mc`` (600
riichi points, 4 MCR points), 0.1 for a ranking policy (losses in ranks). Divided by the
number of decisions it does not grow with the length of a game, so games of one variant
reviewed by one policy compare.

Only a decision with a choice (more than one legal action) is rated: the others are counted on
their own (``forced_decisions``). What a log holds of them differs by source: an mjai TCP or
Botzone log has every offer that only a pass answers (the platform asks on every discard), a
local-table, Tenhou or imported log has none of those but a riichi's forced discards; rated
over all of them, one game read from two logs got two ratings. A fallback the log records on
a forced decision is still one the playing policy made: ``fallbacks`` counts it with the rated
ones' (as many as `mjbot replay` counts), ``forced_fallbacks`` says how many were forced.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

from brain.rules import VARIANTS, rules_for
from brain.shanten import HandError
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from replay.replayer import (
    Replay,
    action_text,
    damage_note,
    fallback_text,
    step_pass,
    unfinished_game,
    walk,
)
from replay.review.evaluators import POINTS, Evaluation, Evaluator, PolicyFailed
from replay.review.situation import Opponents, describe, hand_text

COSTLY = 5
RANK_SCALE = 0.1

Progress = Callable[[int, int], None]  # (decisions done, decisions)


class ActionRow(TypedDict):
    """One legal action as the policy ranked it; a discard's ``deal_in`` where opponent
    models give one (P(it deals in))."""

    action: str
    rank: int
    value: float | None
    deal_in: NotRequired[float]


class FallbackNote(TypedDict):
    """Why our own log's decision was not its policy's answer, as the log gives it (``kind``:
    brain/tally.py's FallbackKind value; None in a log from before it was recorded)."""

    kind: str | None
    why: str


class ReviewRow(TypedDict):
    """One decision of the review (``--json``'s ``rows``). A decision left out (its hand
    cannot be measured, or the policy gave no answer) has ``error``, ``policy_failed``, no
    ``loss`` and no ``actions``. A decision where our own log's policy fell back has
    ``fallback``, as `mjbot replay` shows it."""

    n: int
    event_index: int
    round: str
    kind: str
    offered: str
    hand: str
    played: str
    best: str
    agree: bool
    loss: float | None
    forced: str
    actions: list[ActionRow]
    error: NotRequired[str]
    policy_failed: NotRequired[bool]
    fallback: NotRequired[FallbackNote]


def round_label(state: TableState) -> str:
    return f"{'ESWN'[state.round_wind % 4]}{state.round_number + 1}-{state.honba}"


def offered_text(request: ev.DecisionRequest) -> str:
    """The tile a claim (or a robbed kong) is on and whose it is; "" on one's own turn."""
    if request.kind == "turn" or request.tile is None:
        return ""
    whose = "" if request.from_seat is None else f" from seat {request.from_seat}"
    return f"{T.tile_name(request.tile)}{whose}"


def rating_scale(unit: str, variant: str) -> float:
    """A tenth of a typical win of the variant (1 for a name no registry entry has)."""
    typical = VARIANTS[variant].typical_win if variant in VARIANTS else 10.0
    return 0.1 * typical if unit == POINTS else RANK_SCALE


def review(replay: Replay, evaluator: Evaluator, progress: Progress | None = None,
           costly: int = COSTLY) -> dict[str, Any]:
    """The review of every decision of ``replay``'s seat as plain data (``--json``)."""
    started = time.perf_counter()
    rules = rules_for(replay.variant)
    rows: list[ReviewRow] = []
    situations: dict[int, dict[str, Any]] = {}
    total = len(replay.decisions)
    place = {id(d): i for i, d in enumerate(replay.decisions)}
    done = forced = 0
    forced_fell: list[FallbackNote] = []
    for d, state in walk(replay):
        legal = list(d.legal) or rules.legal_actions(state, d.request)
        done = place[id(d)] + 1  # a damaged hand's decisions, which are not walked, passed
        if len(legal) <= 1:  # no choice: counted on its own, not rated (module doc)
            forced += 1
            if d.fallback:  # still a fallback the log records: counted with the others
                forced_fell.append({"kind": d.fallback_kind or None, "why": d.fallback})
            if progress is not None:
                progress(done, total)
            continue
        n = len(rows)
        try:
            evaluation = evaluator.evaluate(state, d.request, legal)
            opponents = Opponents(state)
            situations[n] = describe(state, opponents)
        # a log whose hand is no hand, or a policy that gave no answer: that decision is
        # left out, and counted (a policy's failure is its own figure: policy_failures)
        except (HandError, StateError, PolicyFailed) as exc:
            rows.append({"n": n, "event_index": d.index, "round": round_label(state),
                         "kind": d.request.kind, "offered": offered_text(d.request),
                         "hand": hand_text(state),
                         "played": action_text(d.action), "best": "", "agree": False,
                         "loss": None, "forced": "", "actions": [], "error": str(exc),
                         "policy_failed": isinstance(exc, PolicyFailed)})
        else:
            rows.append(_row(n, d.index, state, d.request, d.action, evaluation,
                             opponents))
        if d.fallback:  # our own log's: what was played was not its policy's own answer
            rows[-1]["fallback"] = {"kind": d.fallback_kind or None, "why": d.fallback}
        if progress is not None:
            progress(done, total)
    if progress is not None and done < total:  # the last ones were a damaged hand's: the
        progress(total, total)  # bar stopped short of its total, its line left open
    result = _summary(replay, evaluator, rows, situations, costly,
                      time.perf_counter() - started, forced, forced_fell)
    # a hand of our own log that the table refused as it was walked (the reader notes an
    # import's): said as the reader's are, by every review of the replay, not only the walk
    # that noted it (a later walk leaves a hand noted already without a word)
    result["notes"] += [note for x in replay.damaged
                        if (note := damage_note(x)) not in replay.notes]
    return result


def _row(n: int, index: int, state: TableState, request: ev.DecisionRequest, played: Any,
         evaluation: Evaluation, opponents: Opponents) -> ReviewRow:
    """One decision; a discard's ``deal_in`` is the opponent models' P(it deals in). A
    discard at a step that offers none (NTPU's ``/ask gong``, :func:`step_pass`) was a pass:
    it is valued as the policy's best discard, the tile being the next step's choice (it
    was ranked, and its loss counted, twice)."""
    valued = played
    if step_pass(request, played):
        valued = next((s.action for s in evaluation.ranked
                       if isinstance(s.action, ev.Discard)), played)
    loss = evaluation.loss(valued)
    found = evaluation.find(valued)
    actions = []
    for s in evaluation.ranked:
        row: ActionRow = {"action": action_text(s.action), "rank": s.rank,
               "value": None if s.value is None else round(s.value, 2)}
        if isinstance(s.action, ev.Discard) and opponents.estimate is not None:
            row["deal_in"] = round(opponents.deal_in(T.kind(s.action.tile)), 4)
        actions.append(row)
    return {
        "n": n, "event_index": index, "round": round_label(state), "kind": request.kind,
        "offered": offered_text(request),
        "hand": hand_text(state), "played": action_text(played),
        "best": action_text(evaluation.top), "agree": found is not None and found.rank == 1,
        "loss": None if loss is None else round(loss, 4), "forced": evaluation.forced,
        "actions": actions,
    }


def _summary(replay: Replay, evaluator: Evaluator, rows: list[ReviewRow],
             situations: dict[int, dict[str, Any]], costly: int,
             seconds: float, forced: int, forced_fell: list[FallbackNote]) -> dict[str, Any]:
    valued = [(loss, r) for r in rows if (loss := r["loss"]) is not None]
    agree = sum(r["agree"] for r in rows)
    failed = [r for r in rows if r.get("policy_failed")]
    errors = sum(1 for r in rows if "error" in r) - len(failed)
    total_loss = sum(loss for loss, _ in valued)
    mean = total_loss / len(valued) if valued else 0.0
    scale = rating_scale(evaluator.unit, replay.variant)
    worst = sorted((v for v in valued if v[0] > 0), key=lambda v: (-v[0], v[1]["n"]))
    top = [{**r, "situation": situations[r["n"]]} for _, r in worst[:costly]]
    fell = [r for r in rows if "fallback" in r]
    # every fallback the log records, a forced decision's too (not rated, no row: no loss)
    notes = [f for r in fell if (f := r.get("fallback"))] + forced_fell
    kinds = Counter(f["kind"] or "kind not recorded" for f in notes)
    # costliest first (a decision left out, its loss unknown, after those valued)
    fell_worst = sorted(fell, key=lambda r: (r["loss"] is None, -(r["loss"] or 0.0), r["n"]))
    return {
        "path": replay.path, "source": replay.source, "variant": replay.variant,
        "seat": replay.seat, "policy": evaluator.name, "unit": evaluator.unit,
        "playouts": getattr(evaluator, "playouts", None),
        "decisions": len(rows), "forced_decisions": forced, "valued": len(valued), "agree": agree,
        "agreement": agree / len(rows) if rows else None,
        "total_loss": round(total_loss, 3),
        "loss_per_decision": round(mean, 4) if valued else None,
        "rating": round(100.0 * math.exp(-mean / scale), 1) if valued else None,
        "rating_scale": scale, "costly": top, "rows": rows, "errors": errors,
        "policy_failures": len(failed),
        # our own log's fallbacks (each row's ``fallback``), the review's loss on them
        "fallbacks": len(notes), "forced_fallbacks": len(forced_fell),
        "fallback_kinds": dict(sorted(kinds.items())),
        "fallback_loss": round(sum(r["loss"] or 0.0 for r in fell), 3),
        "costly_fallbacks": fell_worst[:costly],
        "notes": replay.notes + ([f"{errors} decisions left out: their hand cannot be "
                                  "measured"] if errors else [])
        + ([f"POLICY FAILED: {evaluator.name} gave no answer on {len(failed)} decisions, "
            f"left out (first: {failed[0]['error']})"] if failed else [])
        + ([f"seat {replay.seat} made no decision in this game: nothing to review"]
           if not rows and not forced else [])
        + ([f"seat {replay.seat} had no choice to make in this game ({forced} forced): "
            "nothing to review"] if not rows and forced else [])
        + ([f"game unfinished: {why}"] if (why := unfinished_game(replay)) else []),
        "seconds": round(seconds, 3),
    }


def kind_text(row: dict[str, Any]) -> str:
    """The decision's kind, with the tile a claim is on ("claim on 4p from seat 3")."""
    return str(row["kind"]) + (f" on {row['offered']}" if row.get("offered") else "")


def forced_text(result: dict[str, Any]) -> str:
    """The decisions with one legal action, beside the count of those rated ("" if none)."""
    forced = result.get("forced_decisions", 0)
    return f" (and {forced} forced: one legal action, not rated)" if forced else ""


def all_decisions(result: dict[str, Any]) -> int:
    """Every decision the log records of the seat: those rated and those forced."""
    return int(result["decisions"]) + int(result.get("forced_decisions", 0))


def or_na(value: Any) -> str:
    """A figure, or n/a where no decision was valued (a seat that never decided)."""
    return "n/a" if value is None else str(value)


def format_review(result: dict[str, Any], every: bool = False) -> str:
    """The text form: the summary, the costliest decisions with their situation, and (with
    ``every``) one line per decision."""
    unit = "points" if result["unit"] == POINTS else "ranks (0 best .. 1 worst)"
    pct = "n/a" if result["agreement"] is None else f"{100 * result['agreement']:.1f}%"
    lines = [f"review of {result['path']}  [{result['source']}, {result['variant']}] seat "
             f"{result['seat']}, policy {result['policy']}"
             + (f" ({result['playouts']} playouts per action)" if result["playouts"] else ""),
             f"  decisions {result['decisions']}{forced_text(result)}, agreement "
             f"{result['agree']}/{result['decisions']} ({pct})",
             f"  expected loss: total {result['total_loss']}, per decision "
             f"{result['loss_per_decision']} {unit}" if result["loss_per_decision"] is not None
             else "  expected loss: n/a (no decision valued)",
             f"  rating {or_na(result['rating'])} (100 = the policy's own play; scale "
             f"{result['rating_scale']:g})"]
    if result["fallbacks"]:
        kinds = ", ".join(f"{k} {n}" for k, n in result["fallback_kinds"].items())
        on_forced = result.get("forced_fallbacks", 0)
        lines.append(f"  fallbacks {result['fallbacks']} of {all_decisions(result)} decisions "
                     f"({kinds})" + (f", {on_forced} of them on a forced decision (not rated)"
                                     if on_forced else "")
                     + f", loss on them {result['fallback_loss']:g}")
    lines += [f"  note: {n}" for n in result["notes"]]
    if result["costly_fallbacks"]:
        shown = len(result["costly_fallbacks"])
        rated = result["fallbacks"] - result.get("forced_fallbacks", 0)
        more = f" (of {rated} rated; --all marks each)" if shown < rated else ""
        lines.append(f"the {shown} costliest fallbacks{more}:")
    for r in result["costly_fallbacks"]:
        loss = "n/a" if r["loss"] is None else f"{r['loss']:zg}"
        best = f"best {r['best']}, loss {loss}" if r["best"] else f"left out: {r.get('error')}"
        lines.append(f"- {r['round']} {kind_text(r)}: FALLBACK {r['played']} "
                     f"({fallback_text(r['fallback'])}); {best}")
    if result["costly"]:
        lines.append(f"the {len(result['costly'])} costliest decisions:")
    for r in result["costly"]:
        s = r["situation"]
        lines.append(f"- {r['round']} {kind_text(r)}: played {r['played']}, best {r['best']}, "
                     f"loss {r['loss']:zg}"
                     + (f"  FALLBACK ({fallback_text(f)})" if (f := r.get("fallback")) else ""))
        ready = s.get("waits") or ", ".join(f"{k}: {v}" for k, v in
                                            s.get("ready_after", {}).items())
        lines.append(f"    hand {s['hand']}  shanten {s['shanten']}"
                     + (f"  waits {ready}" if ready else "") + f"  wall {s['wall']}")
        if s["dangerous"]:
            lines.append("    dangerous: " + ", ".join(
                f"seat {t['seat']}" + (" (riichi)" if t["riichi"] else "")
                + f" P(ready) {t['p_ready']:.2f}" for t in s["dangerous"]))
        lines.append("    actions: " + ", ".join(
            f"{a['action']}" + (f" {a['value']:zg}" if a["value"] is not None else "")
            for a in r["actions"][:6]))
    if every:
        for r in result["rows"]:
            mark = "=" if r["agree"] else "x"
            loss = "" if r["loss"] is None else f" loss {r['loss']:zg}"
            lines.append(f"  {mark} {r['n']:3d} {r['round']:6s} {r['kind']:6s} "
                         f"{r['hand']:30s} played {r['played']:14s} best {r['best']}{loss}"
                         + (f"  FALLBACK ({fallback_text(f)})" if (f := r.get("fallback"))
                            else ""))
    return "\n".join(lines)
