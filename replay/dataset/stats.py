"""What a dataset holds (``mjbot dataset stats``), read shard by shard with only the few fields
the figures need."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from replay.dataset import schema as S
from replay.dataset.shards import read_manifest, read_shard, shard_paths

_FIELDS = ("seat", "request", "action", "action_index", "legal_count", "fallback", "policy",
           "t_tenpai", "h_reason", "h_wins")


def dataset_stats(root: str | Path) -> dict[str, Any]:
    manifest = read_manifest(Path(root))
    by_kind: Counter[str] = Counter()
    by_action: Counter[str] = Counter()
    by_policy: Counter[str] = Counter()
    by_end: Counter[str] = Counter()
    decisions = hands = forced = illegal = fallbacks = wins = 0
    opp_pairs = opp_tenpai = 0
    tenpai_by_kind: dict[str, list[int]] = {k: [0, 0] for k in S.REQUEST_KINDS}
    policies = manifest.get("policies", [])
    for path, size in shard_paths(root, manifest):
        d = read_shard(path, _FIELDS, expected_bytes=size)
        n = int(d["seat"].shape[0])
        decisions += n
        hands += int(d["h_reason"].shape[0])
        for code, count in zip(*np.unique(d["request"], return_counts=True), strict=True):
            by_kind[S.REQUEST_KINDS[int(code)]] += int(count)
        for code, count in zip(*np.unique(d["action"][:, 0], return_counts=True), strict=True):
            by_action[S.ACTION_CODES[int(code)]] += int(count)
        for code, count in zip(*np.unique(d["policy"], return_counts=True), strict=True):
            by_policy[policies[int(code)] if int(code) < len(policies) else str(code)] += int(
                count)
        for code, count in zip(*np.unique(d["h_reason"], return_counts=True), strict=True):
            by_end[S.END_REASONS[int(code)]] += int(count)
        wins += int((d["h_wins"][:, :, 0] >= 0).sum())
        forced += int((d["legal_count"] == 1).sum())
        illegal += int((d["action_index"] < 0).sum())
        fallbacks += int(d["fallback"].sum())
        # opponents: every seat but the decider's
        others = np.ones((n, 4), dtype=bool)
        others[np.arange(n), d["seat"].astype(np.int64)] = False
        tenpai = (d["t_tenpai"] > 0) & others
        opp_pairs += int(others.sum())
        opp_tenpai += int(tenpai.sum())
        for code, kind in enumerate(S.REQUEST_KINDS):
            rows = d["request"] == code
            tenpai_by_kind[kind][0] += int(tenpai[rows].sum())
            tenpai_by_kind[kind][1] += int(others[rows].sum())
    return {
        "schema_version": manifest["schema_version"],
        "variant": manifest.get("variant"),
        "source": manifest.get("source"),
        "policies": policies,
        "shards": len(manifest["shards"]),
        "bytes": sum(int(s["bytes"]) for s in manifest["shards"]),
        "games": manifest.get("games"),
        "stopped": manifest.get("stopped"),  # a self-play run cut short: its first wall sets
        "hands": hands,
        "decisions": decisions,
        "decisions_per_hand": decisions / hands if hands else None,
        "by_kind": {k: by_kind.get(k, 0) for k in S.REQUEST_KINDS},
        "by_action": dict(sorted(by_action.items())),
        "by_policy": dict(sorted(by_policy.items())),
        "hand_endings": dict(sorted(by_end.items())),
        "wins": wins,
        "forced_decisions": forced,
        "illegal_actions": illegal,
        "fallbacks": fallbacks,
        "opponent_tenpai_rate": opp_tenpai / opp_pairs if opp_pairs else None,
        "opponent_tenpai_rate_by_kind": {
            k: (t / n if n else None) for k, (t, n) in tenpai_by_kind.items()},
    }


def format_stats(stats: dict[str, Any]) -> str:
    rate = stats["opponent_tenpai_rate"]
    lines = [
        f"dataset {stats['variant']} ({stats['source']}, schema {stats['schema_version']}): "
        f"{stats['hands']} hands, {stats['decisions']} decisions in {stats['shards']} shards, "
        f"{stats['bytes'] / 1e6:.2f} MB",
        *([f"stopped early ({stop_reason_text(stats['stopped']['reason'])}): the first "
           f"{stats['stopped']['units_done']} of {stats['stopped']['units_planned']} wall sets"]
          if stats.get("stopped") else []),
        "by kind: " + ", ".join(f"{k} {v}" for k, v in stats["by_kind"].items()),
        "by action: " + ", ".join(f"{k} {v}" for k, v in stats["by_action"].items()),
        "by policy: " + ", ".join(f"{k} {v}" for k, v in stats["by_policy"].items()),
        "hand endings: " + ", ".join(f"{k} {v}" for k, v in stats["hand_endings"].items()),
        f"opponent tenpai rate: {'n/a' if rate is None else f'{100 * rate:.1f}%'}",
        f"forced decisions {stats['forced_decisions']}, illegal actions "
        f"{stats['illegal_actions']}, fallbacks {stats['fallbacks']}",
    ]
    return "\n".join(lines)


def stop_reason_text(reason: str) -> str:
    """How a report names why a run stopped (a manifest's ``stopped``, an arena's): the
    signal, or the option whose time passed. The arena, league and self-play use it too."""
    return "--stop-after passed" if reason == "time" else reason
