"""A riichi player's replay walk-through on real records (tests/data/shared): what `mjbot
replay` and its exports say must be what the record says happened."""

from __future__ import annotations

import pytest

from protocols import events as ev
from replay.formats import mjai_log, mjlog
from tests.shared_data import DATA

MJX = DATA / "tenhou" / "mjx_pairs"


def _wins(events: list[object]) -> list[ev.RoundWon]:
    return [e for e in events if isinstance(e, ev.RoundWon)]


@pytest.mark.parametrize("name", ["2010110100gm-00a9-0000-de3472e8.mjlog", "pao-tsumo.mjlog"])
def test_an_open_win_with_a_chi_keeps_its_han_through_an_mjai_export(name: str) -> None:
    """mjai writes a chi as ``pai`` 2m, ``consumed`` 3m 4m; kept in that order our rules saw no
    sequence, and a one-han open hand (E3: a pon of the round wind beside a chi of 234m;
    pao-tsumo E2: open 三色同順) read back at value 0 with no yaku. Every win must keep
    Tenhou's han."""
    record = mjlog.loads((MJX / name).read_text(encoding="utf-8"))
    again = mjai_log.loads(mjai_log.dumps(record))
    theirs, ours = _wins(record.events), _wins(again.events)
    assert [w.value for w in ours] == [w.value for w in theirs]
    assert all(w.yaku for w in ours)
    assert [w.deltas for w in ours] == [w.deltas for w in theirs]

