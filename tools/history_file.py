"""A made-up community history for `manage.py import_solves`: JSON Lines with the fields of
`POST /api/v1/solves`, to measure and profile the import at any size.

    python -m tools.history_file 1000000 history.jsonl   # 1,000,000 programmers, 3,000,000 lines
    python -m tools.history_file 1000 -                  # to standard output

Each programmer solved SOLVES_EACH distinct problems of PROBLEMS, at moments spread evenly over
the last DAYS days, so every default board has something to count: about an eighth of the solves
fall in the last 7 days, half in the last 30, all of them all-time. One line in four gives its
own points. The same arguments write the same file (a seeded generator), up to `now`. The format
has no country or organization: a programmer's groups come from their profile, not from a solve.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from collections.abc import Iterator

PROBLEMS = 500
SOLVES_EACH = 3
DAYS = 60


def handle_of(n: int) -> str:
    return f"coder{n:07d}"


def history_lines(programmers: int, now: dt.datetime, seed: int = 0) -> Iterator[dict]:
    """The lines of `programmers` programmers' history, programmer after programmer."""
    rng = random.Random(seed)
    slugs = [f"problem-{n:03d}" for n in range(PROBLEMS)]
    span = DAYS * 86_400
    for n in range(programmers):
        for slug in rng.sample(slugs, SOLVES_EACH):
            solved_at = now - dt.timedelta(seconds=rng.randrange(60, span))
            line = {
                "id": f"history-{n}-{slug}",
                "programmer": handle_of(n),
                "problem": slug,
                "solved_at": solved_at.isoformat(timespec="seconds"),
            }
            if rng.random() < 0.25:
                line["points"] = rng.choice([10, 20, 50, 100])
            yield line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programmers", type=int)
    parser.add_argument("path", help="where to write it ('-' for standard output)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    out = sys.stdout if args.path == "-" else open(args.path, "w", encoding="utf-8")  # noqa: SIM115
    with out:
        for line in history_lines(args.programmers, now, args.seed):
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
