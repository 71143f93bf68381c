"""Who comes on contest day, as Locust users.

- `Viewer` (500): opens a board or the competition's standings and polls its live fragment as
  `live.js` does (every 3 s, `If-None-Match` with the last ETag); now and then opens a deep page,
  searches a handle or opens a profile.
- `Judge` (8 judges, 4 connections each): reports verdicts (`POST /api/v1/submissions`) and
  solves (`POST /api/v1/solves`) with its service token at the rate of `plan.judge_rate`, and
  retries each report with the same id and body on 503, 409 in progress, 429 or a dropped
  connection until it is answered, as a judge should.
- `FormProgrammer` (50): signs up and answers problems through the HTML forms, CSRF and all.
- `AnswerGuesser`, `SignupLooper`, `PasswordGuesser`: one abuser each.

Every request and every acknowledgement goes to the run's logbook (`logbook`, which the verdict
reads), as the load generator saw them. The site is reached as through the TLS proxy of a
deployment: `X-Forwarded-Proto: https` and each simulated client's own address in
`X-Forwarded-For` (addresses from the documentation ranges).
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
import re
import time

import gevent
from locust import HttpUser, between, constant, task

from loadtest import browser, plan
from loadtest.logbook import RUN_DIR, ack

WORLD = plan.World.load(RUN_DIR / "world.json")
RUN_SECONDS = (WORLD.time("run_end") - WORLD.time("run_start")).total_seconds()
TIMEOUT = 30  # seconds a request may take before the user counts it as dropped
_addresses = itertools.count(1)
_judges = itertools.count()
_forms = itertools.count()
LIVE_URL = re.compile(r'data-live-url="([^"]+)"')
LIVE_ETAG = re.compile(r'data-live-etag="([^"]+)"')
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def client_address() -> str:
    """A client address of its own for each simulated user (TEST-NET ranges, never routed)."""
    n = next(_addresses)
    return f"198.51.{100 + n // 250}.{n % 250 + 1}" if n < 2500 else f"203.0.113.{n % 250}"


class SiteUser(HttpUser):
    """Reaches the site as a browser behind the deployment's TLS proxy does."""

    abstract = True
    host = WORLD.base_url

    def on_start(self) -> None:
        browser.behind_proxy(self.client, client_address())

    def form_post(self, path: str, fields: dict, name: str):
        """GET the form for its CSRF token, then POST it as the browser would."""
        page = self.client.get(path, name=f"{name} (form)", timeout=TIMEOUT)
        found = CSRF_INPUT.search(page.text or "")
        if found is None:
            return page
        referer = f"https://{self.host.split('://', 1)[1]}{path}"
        return self.client.post(
            path,
            data={"csrfmiddlewaretoken": found.group(1), **fields},
            headers={"Referer": referer},
            name=name,
            timeout=TIMEOUT,
        )


def pause_for(response) -> float:
    """How long the site asked us to wait (Retry-After), or a second."""
    try:
        return max(0.2, float(response.headers.get("Retry-After", 1)))
    except (TypeError, ValueError, AttributeError):
        return 1.0


_watchers = itertools.count()


class Viewer(SiteUser):
    """Watches a board or the standings; the watchers (programmers who asked for alerts) sign
    in first and now and then press "Find me"."""

    fixed_count = plan.VIEWERS
    wait_time = constant(plan.POLL_SECONDS)

    def on_start(self) -> None:
        super().on_start()
        self.live_url = None
        self.etag = None
        self.signed_in = False
        n = next(_watchers)
        if n < len(WORLD.watchers):
            gevent.sleep(random.uniform(0, RUN_SECONDS / 10))
            login = self.form_post(
                "/accounts/login/",
                {"username": WORLD.watchers[n], "password": plan.PASSWORD},
                "login",
            )
            self.signed_in = login.status_code == 200 and "/accounts/login/" not in login.url
        pick = random.random()
        if pick < 0.6:
            self.open("/leaderboard/last-7-days/", "board page")
        elif pick < 0.75:
            self.open("/leaderboard/last-30-days/", "board page")
        else:
            self.open(f"/competitions/{WORLD.competition}/standings/", "standings page")

    def open(self, path: str, name: str) -> None:
        page = self.client.get(path, name=name, timeout=TIMEOUT)
        url, etag = LIVE_URL.search(page.text or ""), LIVE_ETAG.search(page.text or "")
        if url:
            self.live_url, self.etag = url.group(1).replace("&amp;", "&"), etag and etag.group(1)

    @task
    def poll(self) -> None:
        if random.random() < 0.04:
            self.wander()
            return
        if self.live_url is None:
            self.open("/leaderboard/last-7-days/", "board page")
            return
        headers = {"X-Requested-With": "live"}
        if self.etag:
            headers["If-None-Match"] = self.etag
        name = "standings live" if "/competitions/" in self.live_url else "board live"
        with self.client.get(
            self.live_url, headers=headers, name=name, timeout=TIMEOUT, catch_response=True
        ) as response:
            if response.status_code == 304:
                response.success()
            elif response.status_code == 200:
                self.etag = response.headers.get("ETag") or self.etag
            elif response.status_code != 503:
                response.failure(f"status {response.status_code}")

    def wander(self) -> None:
        """A deep page, "Find me" (or a handle search when not signed in) or a profile."""
        n = random.randrange(WORLD.programmers)
        pick = random.random()
        if pick < 0.4:
            page = random.randrange(2, max(3, WORLD.programmers // 50))
            self.client.get(
                f"/leaderboard/last-7-days/?page={page}", name="deep page", timeout=TIMEOUT
            )
        elif pick < 0.7 and self.signed_in:
            self.client.get("/leaderboard/last-7-days/?find=me", name="find me", timeout=TIMEOUT)
        elif pick < 0.7:
            self.client.get(
                f"/leaderboard/last-7-days/?q={plan.handle_of(n)}", name="find", timeout=TIMEOUT
            )
        else:
            self.client.get(f"/u/{plan.handle_of(n)}/", name="profile", timeout=TIMEOUT)


class Judge(SiteUser):
    """One connection of a judge: one report at a time, each retried until answered."""

    fixed_count = plan.JUDGES * plan.CONNECTIONS_PER_JUDGE
    wait_time = constant(0)

    def on_start(self) -> None:
        super().on_start()
        self.index = next(_judges)
        self.token = WORLD.tokens[self.index % plan.JUDGES]
        self.sequence = itertools.count()
        self.random = random.Random(f"judge-{self.index}")

    @task
    def report(self) -> None:
        started = time.time()
        path, body = self.next_report()
        self.post_until_answered(path, body)
        users = plan.JUDGES * plan.CONNECTIONS_PER_JUDGE
        rate = plan.judge_rate(started - WORLD.time("run_start").timestamp(), RUN_SECONDS)
        gevent.sleep(max(0.0, users / rate - (time.time() - started)))

    def next_report(self) -> tuple[str, dict]:
        """Half solves of practice problems (one in ten reported a day late), half verdicts on
        the competition's problems (three in five accepted)."""
        rng, now = self.random, dt.datetime.now(dt.UTC)
        key = f"judge{self.index}-{next(self.sequence)}"
        if rng.random() < 0.5:
            solved_at = now - dt.timedelta(days=1) if rng.random() < 0.1 else now
            return "/api/v1/solves", {
                "id": key,
                "programmer": plan.handle_of(rng.randrange(WORLD.programmers)),
                "problem": rng.choice(plan.PRACTICE_PROBLEMS),
                "solved_at": solved_at.isoformat(),
            }
        return "/api/v1/submissions", {
            "id": key,
            "programmer": plan.handle_of(rng.randrange(min(plan.CONTESTANTS, WORLD.programmers))),
            "problem": rng.choice(plan.CONTEST_PROBLEMS),
            "verdict": "accepted" if rng.random() < 0.6 else "rejected",
            "submitted_at": now.isoformat(),
        }

    def post_until_answered(self, path: str, body: dict) -> None:
        """Send the report, with the same id and body each time, until it is settled."""
        ack({"event": "sent", "path": path, "body": body})
        name = "POST " + path.rsplit("/", 1)[1]
        while True:
            with self.client.post(
                path,
                json=body,
                headers={"Authorization": f"Bearer {self.token}"},
                name=name,
                timeout=TIMEOUT,
                catch_response=True,
            ) as response:
                if report_settled(path, body, response):
                    return
            gevent.sleep(pause_for(response) if response.status_code else 1.0)


def report_settled(path: str, body: dict, response) -> bool:
    """Whether a judge's report is settled, logged as answered (200, 201) or refused (any other
    refusal, a failure); not when the site said to come back (503, 429, 409 while the first
    request with its id is in progress) or the connection dropped."""
    status = response.status_code
    if status in (200, 201):
        answer = response.json()
        ack({"event": "answered", "path": path, "body": body, "status": status, "answer": answer})
        return True
    retry = status in (0, 429, 503) or (
        status == 409 and "request_in_progress" in (response.text or "")
    )
    if not retry:
        answer = response.text[:500]
        ack({"event": "refused", "path": path, "body": body, "status": status, "answer": answer})
        response.failure(f"refused {status}")
        return True
    if status != 0:
        response.success()  # told to come back: not an error of the judge's
    return False


class FormProgrammer(SiteUser):
    """Signs up, then answers practice problems through the answer form (7 in 10 right)."""

    fixed_count = plan.FORM_PROGRAMMERS
    wait_time = between(4, 12)

    def on_start(self) -> None:
        super().on_start()
        n = next(_forms)
        # Newcomers arrive over the first fifth of the contest, not all in its first second.
        gevent.sleep(random.uniform(0, RUN_SECONDS / 5))
        self.handle = f"newcomer{n:03d}"
        self.country = random.choice(plan.COUNTRIES)
        self.solved: set[str] = set()
        while not self.sign_up():
            gevent.sleep(2)

    def sign_up(self) -> bool:
        fields = {
            "username": self.handle,
            "password1": plan.PASSWORD,
            "password2": plan.PASSWORD,
            "country": self.country,
            "organization": "",
        }
        response = self.form_post("/accounts/signup/", fields, "signup")
        if response.status_code == 200 and response.url.endswith("/problems/"):
            ack({"event": "signup", "handle": self.handle, "country": self.country})
            return True
        if response.status_code == 400 and "taken" in (response.text or ""):
            # Our first try was done but its answer lost: the account is ours; log in.
            login = self.form_post(
                "/accounts/login/",
                {"username": self.handle, "password": plan.PASSWORD},
                "login",
            )
            if login.status_code == 200 and "/accounts/login/" not in login.url:
                ack({"event": "signup", "handle": self.handle, "country": self.country})
                return True
        return False

    @task
    def answer(self) -> None:
        left = [slug for slug in plan.PRACTICE_PROBLEMS if slug not in self.solved]
        if not left:
            return
        slug = random.choice(left)
        right = random.random() < 0.7
        text = plan.answer_of(slug) if right else "a wrong guess"
        if right:
            ack({"event": "form-sent", "handle": self.handle, "problem": slug})
        while True:
            sent = time.time()
            page = self.form_post(f"/problems/{slug}/", {"answer": text}, "answer")
            said = page.text or ""
            if page.status_code == 200 and ("Accepted" in said or "Wrong answer" in said):
                break
            gevent.sleep(pause_for(page) if page.status_code else 1.0)
        if right and "Accepted" in said:
            self.solved.add(slug)
            ack(
                {
                    "event": "form-accepted",
                    "handle": self.handle,
                    "problem": slug,
                    "at": sent,
                    "counted": "counted on every board" in said,
                }
            )


class AnswerGuesser(SiteUser):
    """Guesses answers to one problem as fast as it can."""

    fixed_count = 1
    wait_time = constant(0)

    def on_start(self) -> None:
        super().on_start()
        self.form_post(
            "/accounts/signup/",
            {
                "username": "guesser",
                "password1": plan.PASSWORD,
                "password2": plan.PASSWORD,
                "country": "",
                "organization": "",
            },
            "abuse: signup",
        )

    @task
    def guess(self) -> None:
        response = self.form_post(
            "/problems/practice-01/", {"answer": f"guess {random.random()}"}, "abuse: guess"
        )
        if response.status_code == 429:
            gevent.sleep(0.2)
        elif response.status_code == 503:  # down: even a guesser's script waits as it is told
            gevent.sleep(pause_for(response))


class SignupLooper(SiteUser):
    """Signs up again and again from one address."""

    fixed_count = 1
    wait_time = constant(0.2)

    @task
    def sign_up(self) -> None:
        handle = f"spam{random.randrange(10**9)}"
        self.client.cookies.clear()
        self.form_post(
            "/accounts/signup/",
            {
                "username": handle,
                "password1": plan.PASSWORD,
                "password2": plan.PASSWORD,
                "country": "",
                "organization": "",
            },
            "abuse: signup",
        )


class PasswordGuesser(SiteUser):
    """Tries passwords for a watcher's account from one address."""

    fixed_count = 1
    wait_time = constant(0.2)

    @task
    def try_password(self) -> None:
        self.client.cookies.clear()
        self.form_post(
            "/accounts/login/",
            {"username": plan.handle_of(0), "password": f"guess{random.randrange(10**6)}"},
            "abuse: login",
        )
