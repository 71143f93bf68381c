"""The rules of names and groups, each defined once: models, forms, services and API schemas all
import them from here, so a handle the admin accepts is a handle a judge may report.

- A **handle** is a programmer's public name: 1 to 32 letters, digits, ``_`` or ``-``, unique
  without regard to case. A new handle must also not *look like* another programmer's: its
  skeleton (`handle_skeleton`) must differ from theirs, so nobody signs up as ``dem0`` beside
  ``demo`` or ``CaseUserl`` beside ``CaseUser1``.
- A **slug** names a problem, a board or a competition in URLs: Django's slug alphabet (letters of
  either case, digits, ``_`` and ``-``), 1 to 64 characters for problems.
- A **scope** is the group a board is filtered to: everybody, a country (ISO 3166 alpha-2, upper
  case) or an organization (trimmed). Its string form (``country:BD``, ``org:BUET``) is how
  entries and rank data name the group; it is only ever a MongoDB *value*, never a field name.
- **Who may submit**: a banned programmer cannot send answers on the site. A judge's report is a
  fact about something that already happened, so it is kept even for a banned or hidden
  programmer; their attempts stay off the boards and standings until staff restore them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.validators import RegexValidator

HANDLE_MAX_LENGTH = 32
HANDLE_CHARACTERS = "[A-Za-z0-9_-]"
# `^...$` for JSON Schema and pydantic (whose regex `$` means the very end); Python's `$` also
# matches before a trailing newline, so Python code uses the `\A...\Z` forms below.
HANDLE_PATTERN = rf"^{HANDLE_CHARACTERS}{{1,{HANDLE_MAX_LENGTH}}}$"
HANDLE_MESSAGE = "Use 1 to 32 letters, digits, underscores or hyphens."
handle_validator = RegexValidator(
    rf"\A{HANDLE_CHARACTERS}{{1,{HANDLE_MAX_LENGTH}}}\Z", HANDLE_MESSAGE
)

# What each character of a handle (lower case) reads as, after Unicode TR39's skeletons
# ("confusables.txt"), cut down to the handle alphabet: a digit that passes for a letter is that
# letter, and a letter that passes for two (TR39's m -> rn, w -> vv, d -> cl) is those two, so
# "rn" and "m" have one skeleton. TR39 compares case-sensitively and maps I to l; handles are
# unique without case, so i (the same handle as I) maps to l as well. Every character a mapping
# gives maps to itself, so a skeleton's skeleton is itself. (The libraries on PyPI flag mixed
# scripts, as confusable_homoglyphs does, or compare two strings, as confusables does: handles
# are ASCII, and a check against every programmer needs a key to index, which this table gives.)
HANDLE_LOOK_ALIKES = {
    "0": "o",
    "1": "l",
    "i": "l",
    "2": "z",
    "5": "s",
    "8": "b",
    "m": "rn",
    "w": "vv",
    "d": "cl",
}
HANDLE_SKELETON_MAX_LENGTH = 2 * HANDLE_MAX_LENGTH  # every character gives at most two
_LOOK_ALIKES = str.maketrans(HANDLE_LOOK_ALIKES)


def handle_skeleton(handle: str) -> str:
    """What a handle reads as: two handles with one skeleton look alike (``dem0`` and ``demo``
    are both ``clerno``; ``CaseUser1``, ``CaseUserl`` and ``caseuserI`` are ``caseuserl``)."""
    return handle.lower().translate(_LOOK_ALIKES)


PROBLEM_SLUG_MAX_LENGTH = 64
SLUG_CHARACTERS = "[-a-zA-Z0-9_]"  # exactly Django's SlugField alphabet
PROBLEM_SLUG_PATTERN = rf"^{SLUG_CHARACTERS}{{1,{PROBLEM_SLUG_MAX_LENGTH}}}$"

COUNTRY_PATTERN = "^[A-Za-z]{2}$"
country_validator = RegexValidator(r"\A[A-Za-z]{2}\Z", "Use a two-letter country code, e.g. BD.")
ORGANIZATION_MAX_LENGTH = 100


def country_unknown(code: str) -> str | None:
    """Why a two-letter `code` names no country (None when it names one): a programmer's
    country is always one of django-countries' list, so a board filtered by any other code
    would only ever say that nobody is on it."""
    from django_countries import countries  # the list is translated: read it when asked

    code = (code or "").strip().upper()
    return (
        None
        if not code or code in countries
        else f"No country {code}: use an ISO 3166 code, e.g. BD."
    )


@dataclass(frozen=True)
class Scope:
    """Which programmers a board view counts: everybody (the default), a country or an org."""

    kind: str = ""  # "", "country" or "org"
    value: str = ""

    @classmethod
    def of(cls, *, country: str = "", org: str = "") -> Scope:
        """The scope of a filter; raises ValueError when both are given."""
        country, org = (country or "").strip().upper(), (org or "").strip()
        if country and org:
            raise ValueError("Filter by country or by organization, not both.")
        if country:
            return cls("country", country)
        if org:
            return cls("org", org)
        return EVERYBODY

    @classmethod
    def groups_of(cls, *, country: str, organization: str) -> list[Scope]:
        """The groups a programmer with this country and organization belongs to."""
        groups = []
        if country.strip():
            groups.append(cls.of(country=country))
        if organization.strip():
            groups.append(cls.of(org=organization))
        return groups

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}" if self.kind else ""

    def __bool__(self) -> bool:
        return bool(self.kind)

    @property
    def label(self) -> str:
        """The group in words, for pages."""
        return {"country": "country ", "org": "organization "}.get(self.kind, "") + self.value


EVERYBODY = Scope()


SITE = "site"  # an answer sent from a page
JUDGE = "judge"  # a verdict an external judge reports through the API


def submission_refusal(*, programmer, source: str = SITE) -> str | None:
    """Why an attempt of `programmer` from `source` is not taken, or None when it is."""
    if source == SITE and programmer.banned:
        return "Your account is banned from submitting answers."
    return None
