"""One-event durable appends of two source trees against raw sqlite3, run alternately: is a change faster on the disk?

Run: .venv/bin/python bench/compare.py --runs 10 OLD_TREE [NEW_TREE]
  (a tree is a folder holding pbem/ and bench/, e.g. ``git archive main | tar -x -C /tmp/main``;
   NEW_TREE defaults to this checkout)

On this machine's shared disk a durable commit takes 0.15 ms one minute and
0.3 ms the next, and pbem's ratio to raw sqlite3 moves by ±0.05 from one run
of ``bench/store.py`` to the next. Two versions compared in runs taken hours
apart say little. Here each run is a fresh process running the one-event part
of ``bench/store.py`` (raw sqlite3 and pbem, rounds interleaved) with the
tree's own ``pbem`` and ``bench/store.py``, and the trees take turns, so both
see the same minutes of the disk. Printed: each tree's median ratio over its
runs, then every run's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# Run inside the tree's own interpreter path: its pbem, its bench/store.py (same venv for both).
_ONE_RUN = """
import sys, tempfile
from pathlib import Path
tree, rounds = sys.argv[1], int(sys.argv[2])
sys.path[:0] = [tree, tree + "/bench"]
import store
import pbem
assert pbem.__file__.startswith(tree), pbem.__file__
with tempfile.TemporaryDirectory() as tmp:
    medians, _ = store.appends(Path(tmp), rounds, 300, 1)
print(medians["raw sqlite3"] / medians["pbem"])
"""


def one_run(tree: Path, rounds: int) -> float:
    """pbem's rate over raw sqlite3's, one-event appends, in a fresh process on ``tree``'s code."""
    out = subprocess.run([sys.executable, "-c", _ONE_RUN, str(tree), str(rounds)],
                         capture_output=True, text=True, check=True, cwd=tree).stdout
    return float(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=HERE)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of bench/store.py in each run")
    args = parser.parse_args()
    trees = [args.old.resolve(), args.new.resolve()]
    ratios: dict[Path, list[float]] = {tree: [] for tree in trees}
    for _ in range(args.runs):
        for tree in trees:
            ratios[tree].append(one_run(tree, args.rounds))
    for tree, values in ratios.items():
        print(f"{tree}: median {statistics.median(values):.2f}x raw sqlite3's rate  "
              f"(runs: {' '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
