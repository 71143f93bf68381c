"""The API's OpenAPI description as the site serves it, and validators of the answers it
describes."""

from __future__ import annotations

from django.test import Client
from jsonschema import Draft202012Validator


def openapi_document() -> dict:
    """The description as the site serves it (generated from the code)."""
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def response_validator(path: str, method: str, status: int) -> Draft202012Validator:
    document = openapi_document()
    content = document["paths"][path][method]["responses"][str(status)]["content"]
    return Draft202012Validator(
        {**content["application/json"]["schema"], "components": document["components"]}
    )
