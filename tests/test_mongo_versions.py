"""CI checks that nothing newer than the supported MongoDB is used: every aggregation stage and
expression, query and update operator, system variable and command the code names is in the
table of `solutions/mongo_versions.py`, at a version no newer than the oldest supported server
(MongoDB 8.0), and the README says which versions those are."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from solutions import mongo_versions
from solutions.mongo_versions import INTRODUCED, SUPPORTED

ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = {"tests", "var", "node_modules", "static", "templates"}
SYSTEM_VARIABLE = re.compile(r"\$\$[A-Z][A-Z_]*")
WRITE_MODELS = {"InsertOne", "UpdateOne", "UpdateMany", "ReplaceOne", "DeleteOne", "DeleteMany"}


def code_files() -> list[Path]:
    """Every Python file of the site and its tools (not the tests, nor the table itself)."""
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not (set(path.relative_to(ROOT).parts[:-1]) & LEFT_OUT)
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
        and path != Path(mongo_versions.__file__)
    )


def server_features(source: str) -> Iterator[tuple[int, str]]:
    """(line, name) of every feature of the server the source names: a ``$`` key of a dict (an
    operator or a stage), a ``$$SYSTEM`` variable in any string, a command run by name
    (``.command("name")`` or ``.command({"name": ...})``), and ``bulkWrite`` for a bulk write
    through a client (``client.bulk_write(...)``, or a write model given a ``namespace``)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if _text(key).startswith("$") and not _text(key).startswith("$$"):
                    yield key.lineno, key.value
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from ((node.lineno, name) for name in SYSTEM_VARIABLE.findall(node.value))
        elif isinstance(node, ast.Call):
            yield from _called(node)


def _text(node: ast.AST | None) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _called(call: ast.Call) -> Iterator[tuple[int, str]]:
    name = getattr(call.func, "attr", getattr(call.func, "id", ""))
    if name == "command" and call.args:
        first = call.args[0]
        named = _text(first.keys[0]) if isinstance(first, ast.Dict) and first.keys else ""
        if _text(first) or named:
            yield call.lineno, _text(first) or named
    elif name == "bulk_write" and isinstance(call.func, ast.Attribute):
        if "client" in ast.unparse(call.func.value).lower():
            yield call.lineno, "bulkWrite"
    elif name in WRITE_MODELS and any(k.arg == "namespace" for k in call.keywords):
        yield call.lineno, "bulkWrite"


def test_the_scan_sees_operators_stages_variables_commands_and_client_bulk_writes():
    source = (
        'db.t.update_one({"_id": 1, "n": {"$gt": 2}}, [{"$set": {"a": "$b"}}])\n'
        'x = {"$getField": {"field": "1", "input": "$$ROOT"}, "plain": "$field"}\n'
        'db.command("ping"); db.command({"explain": {}}); db.command(name)\n'
        "mongo.get_client().bulk_write([])\n"
        "collection.bulk_write([])\n"
        'UpdateOne({}, {}, namespace="db.entries")\n'
    )
    names = [name for _, name in server_features(source)]
    assert sorted(names) == sorted(
        ["$gt", "$set", "$getField", "$$ROOT", "ping", "explain", "bulkWrite", "bulkWrite"]
    )


def test_the_code_needs_no_mongodb_newer_than_the_oldest_supported():
    files = code_files()
    assert ROOT / "solutions" / "leaderboard" / "expressions.py" in files
    used: dict[str, list[str]] = {}
    for path in files:
        for line, name in server_features(path.read_text()):
            used.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{line}")
    assert {"$getField", "$setField", "$$REMOVE", "$convert"} <= set(used)
    unknown = {name: where for name, where in used.items() if name not in INTRODUCED}
    assert not unknown, f"add these to solutions/mongo_versions.py, with their version: {unknown}"
    newer = {name: where for name, where in used.items() if INTRODUCED[name] > SUPPORTED}
    assert not newer, f"these need a MongoDB newer than {SUPPORTED}: {newer}"


def test_the_readme_states_the_supported_versions():
    readme = (ROOT / "README.md").read_text()
    assert f"MongoDB {SUPPORTED[0]}.{SUPPORTED[1]} or later" in readme
