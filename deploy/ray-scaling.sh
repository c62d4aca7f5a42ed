#!/bin/sh
# The scaling table of deploy/ray.md: `mjbot arena` on the present process pool (--workers K)
# and on a local Ray cluster of K CPUs (--ray local --workers K), for rulebased and mc, each
# run long enough (>= 60 s) that start-up does not dominate. Prints one markdown row per run,
# then Ray's throughput as a ratio of the pool's. Needs the ray extra (pip install -e '.[ray]').
#   usage: deploy/ray-scaling.sh [WORKERS...]   (default: 1 2)
#   MJBOT=...  how to run mjbot (default: mjbot);  OUT=DIR  where the JSON goes
set -eu
MJBOT=${MJBOT:-mjbot}
OUT=${OUT:-$(mktemp -d)}
WORKERS=${*:-1 2}
# hands per worker for about 70 s on one core of a 2-core shared box; scale with HANDS_SCALE
SCALE=${HANDS_SCALE:-1}
export MJBOT_MC="${MJBOT_MC:-playouts=16}"  # mc's playouts per candidate: a tractable mc
run() {  # name policies hands_per_worker workers mode
    hands=$(( $3 * $4 * SCALE ))
    case $5 in ray) extra="--ray local";; *) extra="";; esac
    $MJBOT arena --variant riichi --policies "$2" --hands "$hands" --seed 0 --no-log \
        --workers "$4" $extra --json "$OUT/$1-$5-$4.json" > /dev/null
    cut -d' ' -f2 /proc/loadavg > "$OUT/$1-$5-$4.load" 2> /dev/null || true  # 5-min load
}
for w in $WORKERS; do
    for mode in pool ray; do
        run rulebased rulebased,greedy,greedy,greedy 12000 "$w" "$mode"
        run mc mc,rulebased,rulebased,rulebased 1200 "$w" "$mode"
    done
done
python3 - "$OUT" <<'EOF'
import json, sys
from pathlib import Path

rows = {}
for path in sorted(Path(sys.argv[1]).glob("*-*-*.json")):
    policy, mode, workers = path.stem.split("-")
    rows[(policy, mode, int(workers))] = json.loads(path.read_text())
def load(policy, mode, workers):
    path = Path(sys.argv[1]) / f"{policy}-{mode}-{workers}.load"
    return path.read_text().strip() if path.is_file() else "?"


print("| policy | workers | pool hands/s | pool eff. | Ray hands/s | Ray eff. | Ray/pool | "
      "hands (pool, Ray) | seconds (pool, Ray) | 5-min load after (pool, Ray) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for policy in ("rulebased", "mc"):
    base = {m: rows.get((policy, m, 1), {}).get("hands_per_second") for m in ("pool", "ray")}
    for workers in sorted({w for p, _, w in rows if p == policy}):
        pool, ray = rows.get((policy, "pool", workers)), rows.get((policy, "ray", workers))
        cells = []
        for run, mode in ((pool, "pool"), (ray, "ray")):
            rate = run["hands_per_second"] if run else None
            eff = rate / (workers * base[mode]) if rate and base[mode] else None
            cells += [f"{rate:.1f}" if rate else "-", f"{eff:.2f}" if eff else "-"]
        ratio = (ray["hands_per_second"] / pool["hands_per_second"]) if pool and ray else None
        print(f"| {policy} | {workers} | {' | '.join(cells)} | "
              f"{f'{ratio:.2f}' if ratio else '-'} | "
              f"{pool and pool['hands']}, {ray and ray['hands']} | "
              f"{pool and pool['seconds']}, {ray and ray['seconds']} | "
              f"{load(policy, 'pool', workers)}, {load(policy, 'ray', workers)} |")
EOF
