"""The validator's cost where it is used: one results file the size of a professor's round.

    python -m benchmarks schema

The site reads a 100-round history (benchmarks/bench_site.py), checking every file against
the results schema. Prints the CPU time of one valid file through grader.documents.schema.validate (the
generated predicate answers), through the jsonschema library alone, and of listing the problems
of an invalid one (the library lists them), beside the figures measured when the library
replaced the hand-written checkers.
"""

from __future__ import annotations

import random
import sys
import time

from benchmarks.bench_site import synthetic_round
from grader.documents.schema import _compiled, validate
from grader.rounds.results import schema

# Measured on the shared 2-core development machine, one 1 MB round (60 agents x 28 environments).
BASELINE = {"predicate": 0.026, "library": 3.6, "hand-written lister": 0.27}


def cpu(run) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def main() -> int:
    doc = synthetic_round(0, random.Random(5))
    doc["games"] = {"path": f"{doc['round']['id']}/games.jsonl.gz", "sha256": "sha256:" + "0" * 64, "count": 0}
    root = schema()
    assert validate(doc, root) == []  # compiles both, outside the timing
    _, library = _compiled(root, root)
    valid = cpu(lambda: validate(doc, root))
    alone = cpu(lambda: library.is_valid(doc))
    doc["agents"][0]["name"] = 5
    listed = cpu(lambda: validate(doc, root))
    print(f"one valid results file:   {valid:6.3f} s CPU  [when measured: {BASELINE['predicate']} s]")
    print(
        f"  the library alone:      {alone:6.3f} s CPU  [when measured: {BASELINE['library']} s; "
        f"100 rounds: {alone * 100:.0f} s]"
    )
    print(
        f"one invalid file listed:  {listed:6.3f} s CPU  [the hand-written lister: {BASELINE['hand-written lister']} s]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
