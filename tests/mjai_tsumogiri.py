"""A light outside mjai program for tests that need outside seats but not any one program's
play: it discards what it draws and passes otherwise. Its start is Python's alone (no numpy,
no mjbot), where ``mjbot mjai`` costs ~0.3-0.5 s of CPU at every game's start.

Run as ``python tests/mjai_tsumogiri.py --policy=tsumogiri [SEAT]`` (the option is there for
its "=": a command that holds one, as our own bot's ``--policy=rulebased`` does); the seat
is taken from ``start_game``'s ``id``."""

import json
import sys


def main() -> None:
    if sys.argv[1:2] != ["--policy=tsumogiri"]:
        sys.exit(f"usage: {sys.argv[0]} --policy=tsumogiri [SEAT]")
    seat = None
    for line in sys.stdin:
        events = json.loads(line)
        seat = next((e["id"] for e in events if e["type"] == "start_game"), seat)
        last = events[-1]
        answer: dict[str, object] = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
