"""Fill an empty site with demo data, so a newcomer's first `make run` shows a living board.

Problems with answers, a few hundred programmers from several countries and organizations, and
their solves spread over the last 29 days (inside LEADERBOARD_MAX_LATE_DAYS), busier towards
today so the 7-day board moves. One login user, `demo`, can answer problems at once; its password
is printed. The run command calls it with --if-empty on every start.

The solves go into the `solves` log in one batch and every board is rebuilt from it
(services.solves_import): the same boards as recording them one by one, in a fraction of the time.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

from activity import services as activity_services
from competitions import services as competition_services
from competitions.models import Competition
from solutions import services
from solutions.models import Board, Problem, Programmer

DEMO_USERNAME = "demo"
DEMO_COMPETITION = "demo-cup"
SPREAD_DAYS = 29

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


class Command(BaseCommand):
    help = "Create demo problems, programmers and solves (with --if-empty: only on a new site)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing when problems already exist."
        )
        parser.add_argument("--programmers", type=int, default=300, help="How many (300).")
        parser.add_argument("--seed", type=int, default=2020, help="Random seed.")

    def handle(self, *args, **options) -> None:
        if options["if_empty"] and Problem.objects.exists():
            self.stdout.write("Problems exist already: no demo data added.")
            return
        rng = random.Random(options["seed"])
        problems = self.create_problems()
        with transaction.atomic():
            programmers = self.create_programmers(rng, options["programmers"])
            password = self.create_demo_user()
        solves = self.spread_solves(rng, programmers, problems)
        counted = services.solves_import(solves=solves)
        contest = self.create_running_competition(rng, programmers, problems)
        # Record the past days' ranks now, so profiles chart a month of history at once.
        for board in Board.objects.all():
            activity_services.history_snapshot(board=board)
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(problems)} problems, {len(programmers)} programmers, {counted} solves."
            )
        )
        self.stdout.write(f"Competition running: /competitions/{contest.slug}/")
        if password:
            self.stdout.write(f"Log in as {DEMO_USERNAME} with password: {password}")

    def create_running_competition(
        self, rng: random.Random, programmers: list[Programmer], problems: list[Problem]
    ) -> Competition:
        """A competition that started two hours ago, with verdicts from a judge, so the
        standings page has something to show."""
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

    def create_problems(self) -> list[Problem]:
        return [
            Problem.objects.get_or_create(
                slug=slug,
                defaults={"title": title, "statement": statement, "answer": answer, "points": pts},
            )[0]
            for slug, title, statement, answer, pts in PROBLEMS
        ]

    def create_programmers(self, rng: random.Random, count: int) -> list[Programmer]:
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

    def create_demo_user(self) -> str | None:
        """The login user `demo` with a fresh password (None when it exists already)."""
        if User.objects.filter(username=DEMO_USERNAME).exists():
            return None
        password = secrets.token_urlsafe(9)
        user = User.objects.create_user(username=DEMO_USERNAME, password=password)
        if not Programmer.objects.filter(handle__iexact=DEMO_USERNAME).exists():
            services.programmer_create(user=user, handle=DEMO_USERNAME, country="BD")
        return password

    def spread_solves(
        self, rng: random.Random, programmers: list[Programmer], problems: list[Problem]
    ) -> list[tuple[Programmer, Problem, dt.datetime]]:
        """A few solves each: most programmers solve a little, a few solve a lot, and recent
        days are busier than old ones."""
        now = timezone.now()
        solves = []
        for programmer in programmers:
            count = min(len(problems), 1 + int(rng.expovariate(0.4)))
            for problem in rng.sample(problems, count):
                age = rng.triangular(0, SPREAD_DAYS, 0)  # days ago, most of them recent
                solves.append((programmer, problem, now - dt.timedelta(days=age)))
        return solves
