"""/api/v1/docs: django-ninja's own copy of Swagger UI, served by the site under its
Content-Security-Policy (no CDN, no inline script), rendering every operation of the OpenAPI
document in a real browser without a console error."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from tests.support import browser as shared

# The browser and live-server fixtures of tests/test_browser.py, found by pytest by these names.
browser = shared.browser
live_server_http = shared.live_server_http
new_tab = shared.new_tab

SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)


def test_the_docs_page_answers_under_the_sites_csp_with_its_scripts_from_the_site(db):
    page = Client().get("/api/v1/docs")
    assert page.status_code == 200
    policy = page["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    scripts = SCRIPT.findall(page.text)
    sources = [re.search(r'src="([^"]+)"', attributes) for attributes in scripts]
    loaded = [found.group(1) for found in sources if found]
    assert loaded and all(src.startswith("/static/ninja/") for src in loaded)
    # The only script element without a source is the settings, a JSON data block: browsers
    # never run it, so the CSP has nothing to allow.
    inline = [attributes for attributes, found in zip(scripts, sources, strict=True) if not found]
    assert all('type="application/json"' in attributes for attributes in inline)
    for src in loaded:  # found by the static files finders: collectstatic ships them
        assert finders.find(src.removeprefix("/static/")), src


def test_the_docs_page_answers_only_get_and_head_in_the_apis_error_shape(db):
    answer = Client().post("/api/v1/docs")
    assert answer.status_code == 405
    assert answer.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_swagger_ui_renders_every_operation_and_tries_one_with_no_console_error(
    new_tab, live_server_http
):
    operations = Client().get("/api/v1/openapi.json").json()["paths"]
    expected = sum(len(methods) for methods in operations.values())
    tab = new_tab()
    assert tab.open("/api/v1/docs").status == 200
    shown = tab.page.locator(".opblock")
    shown.first.wait_for(timeout=15_000)
    assert shown.count() == expected
    assert "/api/v1/solves" in tab.page.locator("#swagger-ui").inner_text()

    boards = tab.page.locator("#operations-default-" + operation_id(operations, "/api/v1/boards"))
    boards.locator(".opblock-summary").click()
    boards.get_by_role("button", name="Try it out").click()
    boards.get_by_role("button", name="Execute").click()
    status = boards.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for(timeout=15_000)
    assert status.inner_text().strip() == "200"
    assert "last-7-days" in boards.locator(".live-responses-table").inner_text()
    tab.screenshot("api-docs")
    assert tab.errors == []


def operation_id(paths: dict, path: str) -> str:
    return paths[path]["get"]["operationId"]
