"""A programmer's profile, its live part, and the card that shows it elsewhere."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.http import quote_etag
from django.views.decorators.http import require_safe

from .. import cards, clock, etags, selectors
from ..models import Programmer

CARD_CACHE_SECONDS = 300  # how long a card is kept, here and by browsers and image proxies


@require_safe
@etags.live_page(etags.profile_etag)
def profile(request: HttpRequest, handle: str, fragment: bool = False) -> HttpResponse:
    """A programmer's profile, or (`fragment`) just its live part: standings and charts. The
    apps built on `solutions` add their parts (charts, follow button) with template tags. A
    banned or deleted programmer has none; a hidden one's is for staff only. Staff also see the
    held solves (see `holds`), marked."""
    programmer = etags.profile_of(request, handle)
    if programmer is None:
        raise Http404("No programmer has that handle.")
    context = {
        "profile": selectors.programmer_profile(programmer=programmer, held=request.user.is_staff),
        "live_url": reverse("profile_live", args=[programmer.handle]),
        "live_etag": quote_etag(etags.profile_etag(request, programmer.handle, fragment=True)),
        "card_markdown": _card_markdown(request, programmer),
    }
    template = "solutions/_profile_live.html" if fragment else "solutions/profile.html"
    return render(request, template, context)


@require_safe
def profile_card(request: HttpRequest, handle: str) -> HttpResponse:
    """The profile card (`cards`), public like an anonymous visitor's profile: the same card for
    everybody, so browsers, image proxies and the site's cache may keep it a few minutes. A
    hidden, banned or unknown handle is a 404, as its profile is to the public."""
    theme = request.GET.get("theme") or cards.DEFAULT_THEME
    if theme not in cards.THEMES:
        known = " or ".join(cards.THEMES)
        return HttpResponseBadRequest(
            f"Unknown theme {theme[:20]!r}: use {known}.", content_type="text/plain"
        )
    programmer = selectors.programmer_profile_for(handle=handle, viewer=AnonymousUser())
    if programmer is None:
        raise Http404("No programmer has that handle.")
    response = HttpResponse(
        _card_svg(programmer, theme), content_type="image/svg+xml; charset=utf-8"
    )
    patch_cache_control(response, public=True, max_age=CARD_CACHE_SECONDS)
    return response


def _card_svg(programmer: Programmer, theme: str) -> str:
    """The card's SVG, drawn once and kept a few minutes: the same for everybody."""
    key = f"card:{programmer.pk}:{programmer.handle}:{programmer.country}:{theme}:{clock.today()}"
    svg = cache.get(key)
    if svg is None:
        svg = cards.card_svg(selectors.programmer_card(programmer=programmer), theme)
        cache.set(key, svg, CARD_CACHE_SECONDS)
    return svg


def _card_markdown(request: HttpRequest, programmer: Programmer) -> str:
    """The Markdown that shows the profile card linked to the profile, for a README."""
    card = request.build_absolute_uri(reverse("profile_card", args=[programmer.handle]))
    page = request.build_absolute_uri(reverse("profile", args=[programmer.handle]))
    return f"[![{programmer.handle} on the leaderboard]({card})]({page})"
