"""One sentence per move: what the player did and the one factor that decided it (seed 004's
commentary, brain/ALGORITHMS.md section 6), with the top-k moves a policy predicted.

The factor is chosen from facts computed on the player's own view, in this order: a win; the
fold (a dangerous opponent, and the tile played is safe where a better shape was on offer);
the danger (the shape-best tile held back because it is more likely to deal in); MCR's 8-fan
minimum (ready or a winning tile, but not 8 fan); value (a dora, a red five or a valued honour
kept at the price of useful tiles; a call refused because it leaves no yaku); and otherwise
the shape: shanten and useful tiles. Every number in a sentence is in ``facts`` too, so tests
and the viewer can check what the words say.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from brain.policies import defence
from brain.policies.evaluation import DiscardInfo, value_honours
from brain.policies.mcr_plan import best_distances_after_discards, winning_waits
from brain.policies.rulebased import RuleBasedPolicy, best_after_call
from brain.rules import rules_for
from brain.rules.base import Rules, WinContext
from brain.rules.mcr import fan_items as mcr_fan_items
from brain.shanten import HandError, shanten
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from replay.replayer import (
    DAMAGED,
    Decision,
    Replay,
    TableWalk,
    action_key,
    action_text,
    damage_reason,
    step_pass,
)
from replay.review.evaluators import Evaluation, Evaluator, PolicyFailed
from replay.review.game import round_label
from replay.review.lookahead import Lookahead
from replay.review.situation import Opponents, Threat, discard_infos, kinds_text

DANGER_MARGIN = 0.03  # deal-in probabilities closer than this are not a reason
MCR_MIN_FAN = 8

WIN, FOLD, DANGER, FAN_MINIMUM, VALUE, SHAPE = (
    "win", "fold", "danger", "fan_minimum", "value", "shape")


@dataclass(frozen=True)
class Comment:
    factor: str
    sentence: str
    facts: dict[str, Any] = field(default_factory=dict)


def _who(threats: list[Threat]) -> str:
    parts = [f"seat {t.seat}" + ("'s riichi" if t.riichi else f" (ready {t.tenpai:.0%})")
             for t in threats]
    return " and ".join(parts)


def _threat_facts(threats: list[Threat]) -> dict[str, Any]:
    """The threats' seats, and the P(ready) that :func:`_who` prints for each one that has
    not declared (``ready``: seat -> probability, as ``deal_in`` holds the deal-in's)."""
    return {"threats": [t.seat for t in threats],
            "ready": {str(t.seat): round(t.tenpai, 3) for t in threats if not t.riichi}}


def _pct(p: float) -> str:
    return f"{100 * p:.0f}%"


def explain(state: TableState, request: ev.DecisionRequest, legal: list[Any],
            action: Any, opponents: Opponents | None = None) -> Comment:
    """The deciding factor of ``action`` from ``state`` (the player's view before it)."""
    opponents = opponents or Opponents(state)
    if isinstance(action, ev.Win):
        tile = T.tile_name(request.tile) if request.tile is not None else "discard"
        how = "by self-draw" if request.kind == "turn" else f"on seat {request.from_seat}'s {tile}"
        facts: dict[str, Any] = {"self_draw": request.kind == "turn"}
        if request.kind != "turn":
            facts.update(from_seat=request.from_seat, tile=tile)
        return Comment(WIN, f"wins {how}.", facts)
    if step_pass(request, action):
        offered = " or ".join(sorted(request.offered or ()))
        return Comment(SHAPE, f"passes at the ask for a {offered} (the discard is the next "
                       "ask's choice).", {"step_pass": True, "offered": offered})
    if request.kind == "turn":
        return _turn(state, request, legal, action, opponents)
    return _claim(state, request, legal, action, opponents)


# ---------------------------------------------------------------------- own turn


def _turn(state: TableState, request: ev.DecisionRequest, legal: list[Any], action: Any,
          opponents: Opponents) -> Comment:
    if isinstance(action, ev.Kan):
        counts = state.counts()
        for t in action.tiles[:1]:
            counts[T.kind(t)] -= 4 if action.kind == "closed_kan" else 1
        sh = shanten(counts, state.spec.regular_shapes_only)
        return Comment(SHAPE, f"declares a {action.kind.replace('_', ' ')} of "
                       f"{T.tile_name(action.tiles[0])}: the hand stays {sh}-shanten and draws "
                       "a replacement.", {"shanten": sh})
    if isinstance(action, ev.AbortiveDraw):
        kinds = sum(1 for k in T.TERMINALS_AND_HONOURS if state.counts()[k])
        return Comment(SHAPE, f"calls the abortive draw: {kinds} kinds of terminals and "
                       "honours, too far from a hand.", {"kinds": kinds})
    if isinstance(action, ev.Pass) and state.last_draw is not None:
        # Taiwan's last drawer is asked only Win or Pass (no discard follows): passing it
        # passes the win, and the hand ends drawn
        drawn_name = T.tile_name(state.last_draw)
        won = any(isinstance(a, ev.Win) for a in legal)
        last = state.spec.last_draw_ends and state.wall_remaining == 0
        text = (f"does not win on the drawn {drawn_name}, though the win was legal" if won
                else f"passes on the drawn {drawn_name}")
        return Comment(VALUE if won else SHAPE,
                       text + ("; it was the last draw, so the hand is drawn." if last else "."),
                       {"drawn": drawn_name, "last_draw": last})
    if not isinstance(action, ev.Discard):
        return Comment(SHAPE, f"{action_text(action)}.", {})
    info = discard_infos(state)
    k = T.kind(action.tile)
    if k not in info:  # a log that discards a tile its hand does not show
        return Comment(SHAPE, f"discards {T.tile_name(action.tile)} (not in the hand as "
                       "logged).", {"tile": T.tile_name(action.tile)})
    d = info[k]
    best_sh = min(i.shanten for i in info.values())
    same = [i for i in info.values() if i.shanten == best_sh]
    top_useful = max(i.useful for i in same)
    shape_best = min((i for i in same if i.useful == top_useful), key=lambda i: i.kind)
    facts: dict[str, Any] = {"tile": T.tile_name(action.tile), "shanten": d.shanten,
                             "best_shanten": best_sh, "useful": d.useful,
                             "useful_tiles": kinds_text(d.useful_kinds),
                             "best_shape": T.tile_name(shape_best.kind),
                             "best_useful": shape_best.useful}
    threats = opponents.threats()
    tile = T.tile_name(action.tile)
    verb = "declares riichi with" if action.riichi else "discards"
    drawn = state.last_draw
    if (drawn is not None and state.hand_shanten() == -1
            and not any(isinstance(a, ev.Win) for a in legal)):
        facts["drawn"] = T.tile_name(drawn)
        if request.offered is not None and "win" not in request.offered \
                and _rules_allow_win(state, drawn):
            # a platform that asks our turn in steps (NTPU: /ask hu, then /ask throw) leaves
            # the win out of the later step's legal set: it was passed there, or not asked
            facts["win_not_offered"] = True
            return Comment(VALUE, f"does not win on the drawn {T.tile_name(drawn)} (the win "
                           f"is not offered at this ask); {verb} {tile}.", facts)
        if state.spec.min_fan:
            return Comment(FAN_MINIMUM, f"below {MCR_MIN_FAN} fan: cannot win on the drawn "
                           f"{T.tile_name(drawn)}; {verb} {tile}.", facts)
        why = "no yaku" if state.spec.needs_yaku else "the rules refuse the win"
        return Comment(VALUE, f"cannot win on the drawn {T.tile_name(drawn)} ({why}); "
                       f"{verb} {tile}.", facts)
    if threats:
        facts.update(_threat_facts(threats))
        comment = _defence(state, k, d, best_sh, shape_best, threats, opponents, facts, verb)
        if comment is not None:
            return comment
    push = ""
    if threats and not facts.get("genbutsu"):
        facts["push"] = True
        push = f", pushing against {_who(threats)} (deal-in {_pct(facts['deal_in'])})"
    if d.shanten == 0:
        waits = sorted(d.useful_kinds)
        left = sum(state.unseen(w) for w in waits)
        facts.update(waits=kinds_text(waits), left=left)
        if state.spec.min_fan:
            rest = state.counts()
            rest[k] -= 1
            good = winning_waits(state, rest, set(waits))
            # self-draw adds fan (不求人 for 门前清 and 自摸): a wait short of 8 on a discard
            # may still be won on one's own draw, so "cannot win" is said of discards only
            drawn_only = [w for w in _self_draw_winning_waits(state, rest, waits)
                          if w not in good]
            facts["waits_8_fan"] = kinds_text(good)
            facts["waits_8_fan_self_draw_only"] = kinds_text(drawn_only)
            by_draw = (f"; {kinds_text(drawn_only)} only by self-draw" if drawn_only
                       else "")
            if not good:
                if drawn_only:
                    return Comment(FAN_MINIMUM, f"{verb} {tile}: ready on {kinds_text(waits)} "
                                   f"({left} left) but below {MCR_MIN_FAN} fan on a discard: "
                                   f"it can win only by self-draw (on "
                                   f"{kinds_text(drawn_only)}).", facts)
                return Comment(FAN_MINIMUM, f"{verb} {tile}: ready on {kinds_text(waits)} "
                               f"({left} left) but below {MCR_MIN_FAN} fan: cannot win on "
                               "them yet.", facts)
            if len(good) < len(waits):
                return Comment(FAN_MINIMUM, f"{verb} {tile}: ready on {kinds_text(waits)}, "
                               f"but only {kinds_text(good)} reach {MCR_MIN_FAN} fan on a "
                               f"discard{by_draw}.", facts)
        return Comment(SHAPE, f"{verb} {tile} to be ready on {kinds_text(waits)} "
                       f"({left} left){push}.", facts)
    value = _kept_for_value(state, k, d, best_sh, shape_best, facts, verb, tile)
    if value is not None:
        return value
    text = f"{verb} {tile}: {d.shanten}-shanten with {d.useful} useful tiles"
    text += f" ({kinds_text(d.useful_kinds)})" if d.useful_kinds else ""
    if d.shanten > best_sh:
        text += f"; it raises the shanten from {best_sh} (best: {facts['best_shape']})"
    elif d.useful < shape_best.useful:
        text += f"; {facts['best_shape']} would keep {shape_best.useful}"
    return Comment(SHAPE, text + push + ".", facts)


def _self_draw_winning_waits(state: TableState, counts: list[int],
                             waits: list[int]) -> list[int]:
    """The kinds among ``waits`` whose win on one's own draw scores at least 8 fan (flowers
    not counted towards the 8), for the ready hand ``counts`` beside the seat's melds."""
    concealed = tuple(k for k in range(34) for _ in range(counts[k]))
    flowers = len(state.me.flowers)
    out = []
    for w in waits:
        items = mcr_fan_items(WinContext(
            concealed=(*concealed, w), melds=tuple(state.melds), win_tile=w, seat=state.seat,
            from_seat=None, dealer=state.dealer, round_wind=state.round_wind_kind,
            flowers=flowers))
        if items is not None and sum(v for _, v in items) - flowers >= MCR_MIN_FAN:
            out.append(w)
    return out


def _rules_allow_win(state: TableState, drawn: int) -> bool:
    """Whether the variant's rules let this hand win on its drawn tile."""
    try:
        return rules_for(state.variant).win_score(state, drawn, None) is not None
    except (ValueError, KeyError, IndexError):  # a table the rules cannot read
        return False


def _defence(state: TableState, k: int, d: DiscardInfo, best_sh: int, shape_best: DiscardInfo,
             threats: list[Threat], opponents: Opponents, facts: dict[str, Any],
             verb: str) -> Comment | None:
    """The fold or the danger, where one of them decided the discard."""
    declared = [t for t in threats if t.riichi]
    genbutsu = bool(declared) and all(k in defence.safe_kinds(state, t.seat) for t in declared)
    p_k = opponents.deal_in(k)
    p_best = opponents.deal_in(shape_best.kind)
    facts.update(genbutsu=genbutsu, deal_in=round(p_k, 3), best_deal_in=round(p_best, 3))
    tile = T.tile_name(k)
    why = "safe (already passed against it)" if genbutsu else f"deal-in {_pct(p_k)}"
    safer = genbutsu or p_k + DANGER_MARGIN < p_best
    if d.shanten > best_sh and safer:
        return Comment(FOLD, f"folds against {_who(threats)}: {verb} {tile}, {why}, giving up "
                       f"the shape ({best_sh}- to {d.shanten}-shanten).", facts)
    if best_sh >= 2 and genbutsu:
        return Comment(FOLD, f"folds against {_who(threats)}: {best_sh}-shanten is too far, "
                       f"{verb} {tile}, {why}.", facts)
    if d.shanten == best_sh and shape_best.kind != k and safer:
        return Comment(DANGER, f"holds {T.tile_name(shape_best.kind)} back (deal-in "
                       f"{_pct(p_best)} against {_who(threats)}) and {verb} {tile}, {why}, "
                       f"staying {d.shanten}-shanten.", facts)
    return None


def _kept_for_value(state: TableState, k: int, d: DiscardInfo, best_sh: int,
                    shape_best: DiscardInfo, facts: dict[str, Any], verb: str,
                    tile: str) -> Comment | None:
    """A discard that gave up useful tiles to keep value: MCR's 8-fan plan, or (riichi) a
    dora / red five / valued honour pair that the shape-best discard would break."""
    if d.shanten != best_sh or shape_best.kind == k:
        return None
    b = shape_best.kind
    if state.spec.min_fan:
        plans = best_distances_after_discards(state.counts(), state.melds)
        facts.update(plan_distance=plans.get(k), best_plan_distance=plans.get(b))
        if plans.get(k, 99) < plans.get(b, 99):
            return Comment(FAN_MINIMUM, f"{verb} {tile} to stay nearer an {MCR_MIN_FAN}-fan "
                           f"hand ({plans[k]} steps; {T.tile_name(b)} would leave "
                           f"{plans[b]}).", facts)
        return None
    if not state.spec.has_dora:
        return None
    dora = {T.dora_from_indicator(i) for i in state.dora_indicators}
    counts = state.counts()
    reasons = []
    if b in dora:
        reasons.append("a dora")
    if any(T.kind(t) == b and T.is_red(t) for t in state.hand):
        reasons.append("a red five")
    if b in value_honours(state) and counts[b] >= 2:
        reasons.append("a valued honour pair (yakuhai)")
    if not reasons:
        return None
    facts["kept"] = T.tile_name(b)
    fewer = shape_best.useful - d.useful
    cost = f"{fewer} useful tiles fewer" if fewer else "as many useful tiles"
    return Comment(VALUE, f"{verb} {tile} and keeps {T.tile_name(b)}, {' and '.join(reasons)}, "
                   f"for value ({cost}).", facts)


# ---------------------------------------------------------------------- claims


def _after_call(state: TableState, action: Any, tile: int) -> int:
    """Shanten after a call, as the rule-based player counts it."""
    counts = state.counts()
    for t in action.tiles:
        counts[T.kind(t)] -= 1
    return best_after_call(counts, T.kind(tile), isinstance(action, ev.Kan),
                           state.spec.regular_shapes_only)


def _claim(state: TableState, request: ev.DecisionRequest, legal: list[Any], action: Any,
           opponents: Opponents) -> Comment:
    tile_k = T.kind(request.tile) if request.tile is not None else -1
    tile = T.tile_name(request.tile) if request.tile is not None else "?"
    before = state.hand_shanten()
    facts: dict[str, Any] = {"tile": tile, "shanten": before}
    if (tile_k in state.waits() and not any(isinstance(a, ev.Win) for a in legal)):
        if state.spec.min_fan:
            return Comment(FAN_MINIMUM, f"below {MCR_MIN_FAN} fan: cannot win on this tile "
                           f"({tile}), so the hand plays on.", facts)
        return Comment(VALUE, f"cannot win on {tile} (no yaku, or furiten): the hand plays "
                       "on.", facts)
    if isinstance(action, ev.Pass) and any(isinstance(a, ev.Win) for a in legal):
        return Comment(VALUE, f"does not win on {tile}, though the win was legal.", facts)
    calls = [a for a in legal if isinstance(a, ev.Chi | ev.Pon | ev.Kan)]
    if isinstance(action, ev.Chi | ev.Pon | ev.Kan) and request.tile is not None:
        after = _after_call(state, action, request.tile)
        facts["after"] = after
        name = {ev.Chi: "chows", ev.Pon: "pungs", ev.Kan: "kongs"}[type(action)]
        text = f"{name} {tile}: {before}- to {after}-shanten"
        if state.spec.needs_yaku and tile_k in value_honours(state) and not isinstance(
                action, ev.Chi):
            return Comment(VALUE, text + ", with a valued honour (yakuhai).", facts)
        return Comment(SHAPE, text + ".", facts)
    if not calls or request.tile is None:
        return Comment(SHAPE, f"passes on {tile}.", facts)
    best_after = min(_after_call(state, a, request.tile) for a in calls)
    facts["best_after"] = best_after
    threats = opponents.threats()
    if threats and before >= 1:
        facts.update(_threat_facts(threats))
        return Comment(FOLD, f"passes on {tile}: {_who(threats)} and the hand {before}-shanten"
                       ": no calls while defending.", facts)
    if best_after >= before:
        return Comment(SHAPE, f"passes on {tile}: a call would not lower the shanten "
                       f"({before}).", facts)
    choice = RuleBasedPolicy().decide(state, request, legal).action
    if isinstance(choice, ev.Pass):
        if state.spec.min_fan:
            # rulebased's test: the called hand is no nearer its 8-fan plans (their distance
            # is not lowered), though a plan may well remain
            return Comment(FAN_MINIMUM, f"passes on {tile}: the call would lower the shanten "
                           f"to {best_after} but bring the hand no nearer an {MCR_MIN_FAN}-fan "
                           "hand.", facts)
        if state.spec.needs_yaku:
            return Comment(VALUE, f"passes on {tile}: the call would lower the shanten to "
                           f"{best_after} but leave the hand without a yaku.", facts)
    return Comment(SHAPE, f"passes on {tile} and stays closed at {before}-shanten (a call "
                   f"would make it {best_after}).", facts)


# ---------------------------------------------------------------------- a whole game


def predicted(evaluation: Evaluation, k: int) -> list[Any]:
    """The policy's ``k`` first actions."""
    return [s.action for s in evaluation.ranked[:k]]


def commentary_rows(replay: Replay, ranker: Evaluator, k: int = 3,
                    progress: Callable[[int, int], None] | None = None,
                    damaged: Callable[[int, str], None] | None = None
                    ) -> Iterator[dict[str, Any]]:
    """Per decision of the replay's seat: the move, the top-k prediction, whether it was in
    it, and the sentence (``--json`` of ``mjbot replay --commentary``), one row at a time,
    worked out as each is asked for (the viewer works a long game's commentary out a hand
    at a time). ``damaged``: where given, a hand the table cannot follow (a damaged or
    hand-edited log's event or move, which its reader takes: a tile 200, a seat 9, a list
    that is a number) is skipped up to the next hand's or game's start, and ``damaged`` called with
    the index of the event where it failed and why; the viewer's commentary was a 422 for
    the whole game. Without it the failure is raised. A move the ranker gives no answer on
    (PolicyFailed) keeps its sentence, with no prediction and ``no_prediction`` saying why:
    one such move made the whole game's commentary a 422 in the viewer, and ended
    ``mjbot replay --commentary``."""
    rules = rules_for(replay.variant)
    table = TableWalk(replay)  # a hand it cannot follow: its moves skipped, up to the next start
    state = table.state
    ahead = Lookahead(replay)  # the opponent models' features, many decisions at once
    for n, d in enumerate(replay.decisions):
        if table.to(d.index, damaged):
            try:
                row = _row(replay, state, d, rules, ranker, k, ahead.estimate(n, state))
            except DAMAGED as exc:
                if damaged is None:
                    raise
                damaged(d.index, damage_reason(exc))
                table.broken = True
            else:
                yield row
        if progress is not None:
            progress(n + 1, len(replay.decisions))


def _row(replay: Replay, state: TableState, d: Decision, rules: Rules, ranker: Evaluator,
         k: int, estimate: Any = None) -> dict[str, Any]:
    """The row of decision ``d``, the table as it stood then (``estimate``: the opponent
    models' of it, where the lookahead has it)."""
    legal = list(d.legal) or rules.legal_actions(state, d.request)
    unranked = None
    try:
        top: list[Any] | None = predicted(ranker.evaluate(state, d.request, legal, top=k), k)
    except (HandError, StateError):  # the table the rules cannot read: no prediction
        top = None  # (one made up from the legal set's order passed for the policy's)
    except PolicyFailed as exc:  # the policy gave no answer on this move: the move is still
        top, unranked = None, str(exc)  # explained, its row says why it has no prediction
    try:
        comment = explain(state, d.request, legal, d.action,
                          None if estimate is None else Opponents(state, estimate))
    except HandError as exc:  # a log whose hand is no hand (a hand-written sample)
        comment = Comment("", f"{action_text(d.action)} (the hand cannot be measured: "
                          f"{exc}).", {})
    keys = [action_key(a) for a in top or ()]
    return {
        "event_index": d.index, "seat": replay.seat, "round": round_label(state),
        "kind": d.request.kind, "played": action_text(d.action),
        "predicted": [action_text(a) for a in top or ()],
        "hit": None if top is None else action_key(d.action) in keys or (
            step_pass(d.request, d.action) and any(step_pass(d.request, a) for a in top)),
        "factor": comment.factor,
        "sentence": f"seat {replay.seat} {comment.sentence}", "facts": comment.facts,
        **({} if unranked is None else {"no_prediction": unranked})}


def format_commentary(rows: list[dict[str, Any]]) -> str:
    """One line per move (``--json`` keeps each text as it was): a reason or sentence of
    several lines (a policy's exception message) is made one (:func:`_one_line`), so that
    a row never splits into lines a reader takes for other rows."""
    lines = []
    for r in rows:
        mark = "?" if r["hit"] is None else "=" if r["hit"] else "x"
        said = ("no prediction: " + _one_line(r["no_prediction"]) if "no_prediction" in r
                else "predicted " + ", ".join(r["predicted"]))
        lines.append(f"  {r['round']:6s} {r['played']:16s} {mark} {said:50s} "
                     f"{_one_line(r['sentence'])}")
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """``text`` on one line: its lines (as str.splitlines breaks them), each stripped, the
    empty ones left out, joined by one space; a text of one line unchanged."""
    parts = text.splitlines()
    if "".join(parts) == text:
        return text
    return " ".join(x.strip() for x in parts if x.strip())
