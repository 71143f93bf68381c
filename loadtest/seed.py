"""Seed the contest day's site through its own services and commands (run inside Django).

    python -m loadtest.seed RUN_DIR               # the community, before the site starts
    python -m loadtest.seed RUN_DIR competition   # the competition, when the load's time is set
    python -m loadtest.seed RUN_DIR released      # after its end: wait for beat to release

Reads RUN_DIR/world.json (written by the driver), writes the month of history to
RUN_DIR/history.jsonl and imports it with `import_solves` (the same path a community moving here
takes), then makes the alert rule, the watchers with their accounts and the
judges' service tokens, and writes the tokens back into world.json. The competition comes
last, once the driver has set when the load starts. Once it has ended, the solves its freeze
held (`solutions.holds`) show on the boards when beat's archive task releases them: the driver
waits for that before it compares the boards with the brute force.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import django


def seed(run_dir: Path) -> None:
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from activity.models import AlertPreferences, AlertRule
    from solutions import tokens
    from solutions.models import Board, Problem, Programmer

    from . import plan

    world = plan.World.load(run_dir / "world.json")
    call_command("mongo_indexes", verbosity=0)
    Programmer.objects.bulk_create(
        [_programmer(Programmer, n) for n in range(world.programmers)], batch_size=2000
    )
    Problem.objects.bulk_create(
        Problem(slug=slug, title=slug.replace("-", " ").title(), answer=plan.answer_of(slug))
        for slug in plan.PRACTICE_PROBLEMS + plan.CONTEST_PROBLEMS
    )
    history = run_dir / "history.jsonl"
    with history.open("w") as out:
        for line in plan.history(world.programmers, world.time("run_start")):
            out.write(json.dumps(line) + "\n")
    call_command("import_solves", str(history))

    board = Board.objects.get(slug="last-7-days")
    AlertRule.objects.update_or_create(
        board=board,
        defaults={"enabled": True, "places": plan.ALERT_PLACES, "minutes": plan.ALERT_MINUTES},
    )
    for n in range(plan.WATCHERS):
        handle = plan.handle_of(n)
        user = User.objects.create_user(handle, f"{handle}@example.com", plan.PASSWORD)
        Programmer.objects.filter(handle=handle).update(user=user)
        AlertPreferences.objects.create(user=user, my_rank_drops=True)
        world.watchers.append(handle)
    world.tokens = [tokens.service_token_create(name=f"judge-{n}")[1] for n in range(plan.JUDGES)]
    world.save(run_dir / "world.json")


def competition_seed(run_dir: Path) -> None:
    """The running competition, once the driver knows when the load starts."""
    from competitions import services as competition_services
    from solutions.models import Problem

    from . import plan

    world = plan.World.load(run_dir / "world.json")
    competition_services.competition_create(
        slug=world.competition,
        title="Contest Day",
        start=world.time("competition_start"),
        end=world.time("competition_end"),
        freeze_at=world.time("competition_freeze"),
        problems=list(Problem.objects.filter(slug__in=plan.CONTEST_PROBLEMS).order_by("slug")),
    )


RELEASE_WAIT_SECONDS = 600.0  # beat's archive task starts within a minute of the end


def released_wait() -> None:
    """Wait until no solve is held any more (beat's archive task released them all), and say
    how long that took; give up after RELEASE_WAIT_SECONDS (the boards will then differ)."""
    from solutions import holds, mongo

    begun = time.monotonic()
    at_the_end = held = mongo.solves().count_documents(holds.HELD)
    while held and time.monotonic() - begun < RELEASE_WAIT_SECONDS:
        time.sleep(1)
        held = mongo.solves().count_documents(holds.HELD)
    state = f"{held} still held" if held else "all released"
    waited = time.monotonic() - begun
    print(f"  {at_the_end} solves held by the freeze: {state} {waited:.0f} s later", flush=True)


def _programmer(model, n: int):
    from . import plan

    country, organization = plan.groups_of(n)
    return model(handle=plan.handle_of(n), country=country, organization=organization)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard_site.settings")
    django.setup()
    if sys.argv[2:] == ["competition"]:
        competition_seed(Path(sys.argv[1]))
    elif sys.argv[2:] == ["released"]:
        released_wait()
    else:
        seed(Path(sys.argv[1]))
