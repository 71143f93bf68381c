"""The demo data: a month of a living site, made through the services real use goes through
(`solutions.services.solves_import`, the competitions' judge reports, activity's rank history).

Each past day's final ranks are recorded as beat would have recorded them, so board arrows and
profile charts have history from the first start on every board. The all-time board needs the
most care: it keeps one running total, so its past days exist only if they were recorded at the
time, and its last week is replayed one day at a time to record them.

Only the demo's commands use this app (`seed_demo`, `demo_password`, `demo_login`); it sits on top
of solutions, competitions and activity.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from axes.utils import reset as axes_reset
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from activity import selectors as activity_selectors
from activity.services.history import history_record, history_snapshot
from activity.services.locks import job_lock
from competitions import services as competition_services
from competitions.models import Competition
from solutions import clock, mongo, services
from solutions.models import Board, Problem, Programmer

DEMO_USERNAME = "demo"
DEMO_COMPETITION = "demo-cup"
SPREAD_DAYS = 29  # inside LEADERBOARD_MAX_LATE_DAYS, so every solve is accepted
REPLAY_DAYS = 7  # the all-time board's recorded days: arrows, and a week of its chart
LOCK_WAIT_SECONDS = 30

PROBLEMS = [
    ("sum-of-two", "Sum of two", "What is 1234 + 4321?", "5555", 100),
    ("powers-of-two", "Powers of two", "What is 2 to the power of 20?", "1048576", 100),
    ("factorial", "Factorial", "What is 10! (ten factorial)?", "3628800", 100),
    ("fibonacci", "Fibonacci", "What is the 30th Fibonacci number (F1 = F2 = 1)?", "832040", 200),
    ("primes", "Counting primes", "How many primes are there below 100?", "25", 200),
    ("gcd", "Greatest common divisor", "What is gcd(1071, 462)?", "21", 100),
    ("palindrome", "Palindrome", "Type the word 'racecar' backwards.", "racecar", 100),
    ("binary", "Binary", "Write 2024 in binary.", "11111101000", 200),
    ("digits", "Digit sum", "What is the sum of the digits of 2 ** 100?", "115", 300),
    ("triangle", "Triangle numbers", "What is the 100th triangle number?", "5050", 200),
    ("collatz", "Collatz", "How many steps does 27 take to reach 1 under Collatz?", "111", 300),
    ("hex", "Hexadecimal", "What is 0xFF + 1 in decimal?", "256", 100),
]
COUNTRIES = ["BD", "BD", "BD", "IN", "IN", "PK", "NP", "LK", "US", "DE", "JP", "BR", "NG", ""]
ORGANIZATIONS = ["BUET", "DU", "SUST", "KUET", "NSU", "IIT Delhi", "LUMS", "ACME Corp", "", ""]
WORDS = [
    "swift", "quiet", "brave", "lucky", "clever", "sunny", "rapid", "calm", "bold", "keen",
    "otter", "falcon", "tiger", "panda", "lynx", "heron", "koala", "raven", "gecko", "bison",
]  # fmt: skip

Solve = tuple[Programmer, Problem, dt.datetime]


@dataclass(frozen=True)
class DemoReport:
    problems: int
    programmers: int
    solves: int
    history_days: int
    competition: str
    password: str | None  # the demo user's, when it was made now


def demo_seed(*, programmers: int, seed: int = 2020) -> DemoReport:
    """Add demo problems, `programmers` programmers with a month of solves, a running
    competition and the staff user `demo` (its password in the report when it is new)."""
    rng = random.Random(seed)
    problems = problems_create()
    with transaction.atomic():
        people = programmers_create(rng=rng, count=programmers)
        password = staff_user_create()
    boards = list(Board.objects.all())
    # Beat may be snapshotting the boards already (`make run` starts everything at once): hold
    # its locks, so it records no half-imported month, and record every day ourselves.
    with history_locks_held(boards):
        counted, days = month_replay(
            solves=solves_spread(rng=rng, programmers=people, problems=problems), boards=boards
        )
        contest = competition_running_create(rng=rng, programmers=people, problems=problems)
    for board in boards:
        history_snapshot(board=board)  # today's ranks, and beat's bookmark
    return DemoReport(
        problems=len(problems),
        programmers=len(people),
        solves=counted,
        history_days=days,
        competition=contest.slug,
        password=password,
    )


def demo_password_set() -> str:
    """Give the user `demo` a new password, and lift a lockout its failed logins left; returns
    the password. Nothing else changes (`make demo-password`). User.DoesNotExist without it."""
    user = User.objects.get(username=DEMO_USERNAME)
    password = password_new()
    user.set_password(password)
    user.save(update_fields=["password"])
    axes_reset(username=DEMO_USERNAME)
    return password


def demo_wipe() -> None:
    """Start the site's data over: every programmer (with their login), problem and competition,
    and the MongoDB data (solves, submissions, boards, history, notifications). Boards, alert
    rules, service tokens and staff logins stay. For development (`make reset`)."""
    db = mongo.get_db()
    kept = mongo.board_versions().name  # live pages' counters only grow, so no ETag comes back
    for name in db.list_collection_names():
        if name != kept:
            db.drop_collection(name)
    with transaction.atomic():
        Competition.objects.all().delete()
        Problem.objects.all().delete()
        User.objects.filter(programmer__isnull=False).delete()
        User.objects.filter(username=DEMO_USERNAME).delete()
        Programmer.objects.all().delete()
    mongo.indexes_ensure()  # every app's indexes again, on the emptied database


# --- the parts -------------------------------------------------------------------------------


def problems_create() -> list[Problem]:
    return [
        Problem.objects.get_or_create(
            slug=slug,
            defaults={"title": title, "statement": statement, "answer": answer, "points": pts},
        )[0]
        for slug, title, statement, answer, pts in PROBLEMS
    ]


def programmers_create(*, rng: random.Random, count: int) -> list[Programmer]:
    taken = {handle.lower() for handle in Programmer.objects.values_list("handle", flat=True)}
    new = []
    while len(new) < count:
        handle = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}{rng.randrange(100)}"
        if handle.lower() in taken:
            continue
        taken.add(handle.lower())
        new.append(
            Programmer(
                handle=handle,
                country=rng.choice(COUNTRIES),
                organization=rng.choice(ORGANIZATIONS),
            )
        )
    return Programmer.objects.bulk_create(new)


def staff_user_create() -> str | None:
    """The user `demo`: a programmer who may also use the admin. Returns its new password (None
    when it exists already: its password is not known any more)."""
    if User.objects.filter(username=DEMO_USERNAME).exists():
        return None
    password = password_new()
    user = User.objects.create_superuser(username=DEMO_USERNAME, email="", password=password)
    if not Programmer.objects.filter(handle__iexact=DEMO_USERNAME).exists():
        services.programmer_create(user=user, handle=DEMO_USERNAME, country="BD")
    return password


def password_new() -> str:
    return secrets.token_urlsafe(9)


def solves_spread(
    *, rng: random.Random, programmers: list[Programmer], problems: list[Problem]
) -> list[Solve]:
    """A few solves each: most programmers solve a little, a few solve a lot, and recent days
    are busier than old ones."""
    now = timezone.now()
    solves = []
    for programmer in programmers:
        count = min(len(problems), 1 + int(rng.expovariate(0.4)))
        for problem in rng.sample(problems, count):
            age = rng.triangular(0, SPREAD_DAYS, 0)  # days ago, most of them recent
            solves.append((programmer, problem, now - dt.timedelta(days=age)))
    return solves


@contextmanager
def history_locks_held(boards: list[Board]) -> Iterator[None]:
    """Hold the lock of every board's history snapshots (`history_snapshot` takes
    `history:<slug>`), waiting for a running snapshot to finish."""
    with ExitStack() as stack:
        for board in boards:
            deadline = time.monotonic() + LOCK_WAIT_SECONDS
            while not stack.enter_context(job_lock(f"history:{board.slug}")):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the history of {board.slug} stays locked")
                time.sleep(0.2)
        yield


def month_replay(*, solves: list[Solve], boards: list[Board]) -> tuple[int, int]:
    """Import the solves, the last `REPLAY_DAYS` days one day at a time, and record each past
    day's final ranks on every board. Returns (solves counted, past days recorded).

    An all-time board's day is its total when the day ends, so it is recorded between one day's
    import and the next: the older weeks arrive in one batch, because every import rebuilds
    every board and a month of daily imports takes minutes. The other boards keep each past
    day's final sums, so the whole month of them is recorded at the end."""
    by_day: dict[int, list[Solve]] = defaultdict(list)
    for solve in solves:
        by_day[services.solve_day(solve[2])].append(solve)
    now_day = clock.today()
    replayed_from = now_day - REPLAY_DAYS
    older = [solve for day, batch in by_day.items() if day <= replayed_from for solve in batch]
    all_time = [board for board in boards if board.spec.is_all_time]
    counted = services.solves_import(solves=older)
    for day in range(replayed_from, now_day):
        if day > replayed_from:
            counted += services.solves_import(solves=by_day.get(day, []))
        for board in all_time:
            history_record(board=board, day=day)
    counted += services.solves_import(solves=by_day.get(now_day, []))  # today: beat's to record
    first = now_day - activity_selectors.CHART_DAYS + 1
    for board in boards:
        if not board.spec.is_all_time:
            for day in range(first, now_day):
                history_record(board=board, day=day)
    return counted, now_day - first


def competition_running_create(
    *, rng: random.Random, programmers: list[Programmer], problems: list[Problem]
) -> Competition:
    """A competition that started two hours ago, with verdicts from a judge, so the standings
    page has something to show."""
    existing = Competition.objects.filter(slug=DEMO_COMPETITION).first()
    if existing:
        return existing
    now = timezone.now()
    start = now - dt.timedelta(hours=2)
    contest = competition_services.competition_create(
        slug=DEMO_COMPETITION,
        title="Demo Cup",
        start=start,
        end=now + dt.timedelta(days=2),
        problems=problems[:4],
    )
    for number, programmer in enumerate(rng.sample(programmers, min(20, len(programmers)))):
        moment = start + dt.timedelta(minutes=rng.randrange(5, 60))
        for problem in rng.sample(problems[:4], rng.randint(1, 4)):
            for attempt in range(rng.choice([1, 1, 2, 3])):
                moment += dt.timedelta(minutes=rng.randrange(1, 15))
                accepted = rng.random() < 0.6
                competition_services.judge_submission_report(
                    key=f"demo:{contest.slug}:{number}:{problem.slug}:{attempt}",
                    handle=programmer.handle,
                    problem_slug=problem.slug,
                    accepted=accepted,
                    submitted_at=min(moment, now),
                )
                if accepted:
                    break
    return contest
