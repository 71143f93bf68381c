"""The API's request and response schemas: pydantic models that validate what comes in and
describe what goes out, from which django-ninja generates the OpenAPI document.

By concern: `fields` (the strict request base, the field types and the error shape every other
module uses), `reports` (judges' solves and verdicts), `boards` (boards, standings, search,
groups), `problems` (a programmer's year, the problems and their solvers) and `access` (access
tokens). Every example in them is a request the API accepts (the tests send each one).
"""
