"""Dependencies point one way: `solutions` is the bottom of the site, and `accounts`,
`competitions` and `activity` build on it. No module of `solutions` imports them, not even inside
a function (they add their parts through template tags and `solutions/extensions.py`)."""

from __future__ import annotations

import ast
import importlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = "solutions"
ABOVE = ("accounts", "activity", "competitions", "integrations")


def core_modules() -> list[str]:
    """Every module of `solutions` (migrations describe the schema; they are left out)."""
    package = ROOT / CORE
    return sorted(
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in package.rglob("*.py")
        if "migrations" not in path.relative_to(package).parts
    )


def imported_names(source: str, module: str) -> list[tuple[int, str]]:
    """(line, module name) of every import anywhere in the source: at the top, inside functions
    and classes, relative ones resolved, and `importlib.import_module("...")` with a literal."""
    # The package that relative imports start from (a package's `__init__` is its own).
    package = (
        module.removesuffix(".__init__")
        if module.endswith(".__init__")
        else module.rpartition(".")[0]
    )
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found += [
                (node.lineno, base if alias.name == "*" else f"{base}.{alias.name}")
                for alias in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", ""))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def reaches_above(name: str) -> bool:
    return name.split(".")[0] in ABOVE


def test_the_import_walker_sees_imports_inside_functions_relative_and_dynamic_ones():
    source = (
        "import os\n"
        "def late():\n"
        "    from activity import live\n"
        "class Hidden:\n"
        "    def method(self):\n"
        "        import competitions.api\n"
        "from . import selectors\n"
        "importlib.import_module('activity.selectors')\n"
        "from accounts.services import account_delete\n"
    )
    names = [name for _, name in imported_names(source, "solutions.views")]
    assert "solutions.selectors" in names
    assert {name for name in names if reaches_above(name)} == {
        "activity.live",
        "competitions.api",
        "activity.selectors",
        "accounts.services.account_delete",
    }


def test_every_module_of_solutions_is_found_and_imports():
    modules = core_modules()
    assert {"solutions.views", "solutions.etags", "solutions.mongo"} <= set(modules)
    assert not any(".migrations" in module for module in modules)
    for module in modules:
        importlib.import_module(module)


@pytest.mark.parametrize("module", core_modules())
def test_no_module_of_solutions_imports_the_apps_above_it(module):
    path = ROOT / Path(*module.split("."))
    if path.is_dir():
        path, module = path / "__init__.py", f"{module}.__init__"
    else:
        path = path.with_suffix(".py")
    offending = sorted(
        {
            f"{path.relative_to(ROOT)}:{line} imports {name}"
            for line, name in imported_names(path.read_text(), module)
            if reaches_above(name)
        }
    )
    assert not offending, "solutions must not depend on the apps above it:\n" + "\n".join(offending)


def test_the_core_imports_neither_the_tools_nor_the_load_and_only_its_command_the_bench():
    """The bench and the load test drive the site from outside and start the embedded server
    (`tools`), beside `solutions` (issue 37): no module of `solutions` imports `tools` or
    `loadtest`, and only `manage.py bench`'s command imports `bench`."""
    command = f"{CORE}.management.commands.bench"
    offending = []
    for module in core_modules():
        path = ROOT / Path(*module.split("."))
        if path.is_dir():
            path, module = path / "__init__.py", f"{module}.__init__"
        else:
            path = path.with_suffix(".py")
        for line, name in imported_names(path.read_text(), module):
            top = name.split(".")[0]
            if top in ("tools", "loadtest") or (top == "bench" and module != command):
                offending.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not offending, "\n".join(offending)


APPS = ("solutions", "accounts", "competitions", "activity", "integrations")


def selector_modules() -> list[tuple[Path, str]]:
    """(path, module) of every read module of the apps: `selectors.py`, or each module of a
    `selectors` package (its `__init__` named `<package>.__init__`, as `imported_names` takes
    it)."""
    found = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "selectors" in parts:
                found.append((path, ".".join(parts)))
    return found


def imports_a_write_module(name: str) -> bool:
    return "services" in name.split(".")


def test_the_write_detector_sees_services_however_imported():
    source = (
        "from .services import today\n"
        "from solutions import services\n"
        "def late():\n"
        "    import competitions.services.standings\n"
        "from . import selectors, clock\n"
    )
    names = [name for _, name in imported_names(source, "activity.selectors")]
    assert [name for name in names if imports_a_write_module(name)] == [
        "activity.services.today",
        "solutions.services",
        "competitions.services.standings",
    ]


def test_the_write_detector_resolves_imports_from_inside_a_read_package():
    source = "from .. import services\nfrom ..services import solve_record\nfrom . import boards\n"
    names = [name for _, name in imported_names(source, "solutions.selectors.standings")]
    assert [name for name in names if imports_a_write_module(name)] == [
        "solutions.services",
        "solutions.services.solve_record",
    ]
    names = [name for _, name in imported_names(source, "solutions.selectors.__init__")]
    assert "solutions.selectors.boards" in names


@pytest.mark.parametrize(
    "path, module", selector_modules(), ids=[module for _, module in selector_modules()]
)
def test_reads_never_import_writes(path, module):
    """A selector reads; it never imports a `services` module, not even for a helper such as
    today's date (`solutions.clock` holds it), so reading cannot set off a write."""
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for line, name in imported_names(path.read_text(), module)
        if imports_a_write_module(name)
    ]
    assert not offending, "\n".join(offending)


def test_the_read_modules_are_found():
    modules = {module.removesuffix(".__init__") for _, module in selector_modules()}
    assert {"solutions.selectors", "activity.selectors", "competitions.selectors"} <= modules
    assert {"solutions.selectors.boards", "solutions.selectors.standings"} <= modules


WRITES = ("insert", "update", "replace", "bulk_write", "find_one_and", "delete")


def site_modules() -> list[Path]:
    return sorted(
        path
        for app in (*APPS, "demo", "leaderboard_site")
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
    )


def submission_writers(path: Path) -> list[str]:
    """`module:function` of every write on `mongo.submissions()` in the file."""
    found = []
    for function in ast.walk(ast.parse(path.read_text())):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith(WRITES)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "attr", "") == "submissions"
            ):
                found.append(f"{path.relative_to(ROOT)}:{function.name}")
    return found


def test_attempts_are_written_by_one_service():
    """The submission document has one writer, `services.submission_record` (through its insert
    helper), so the refusals checked there cannot be skipped by another way in."""
    writers = {writer for path in site_modules() for writer in submission_writers(path)}
    assert writers == {
        "solutions/services/submissions.py:submission_record",
        "solutions/services/submissions.py:_submission_insert",
    }


ENGINE = ROOT / CORE / "leaderboard"
ENGINE_MODULE_LINES_MAX = 400  # the guideline, as for every module split by concern (issue 37)


def test_every_module_of_the_engine_can_be_read_in_one_sitting():
    """The engine is split by concept (entries, orders, journals, reading, the applier, ...),
    each module short enough to hold in one's head."""
    lengths = {
        str(path.relative_to(ENGINE)): len(path.read_text().splitlines())
        for path in sorted(ENGINE.rglob("*.py"))
    }
    too_long = {name: lines for name, lines in lengths.items() if lines > ENGINE_MODULE_LINES_MAX}
    assert not too_long, f"engine modules over {ENGINE_MODULE_LINES_MAX} lines: {too_long}"


def test_mongo_imports_nothing_from_the_engine():
    """`solutions.mongo` sits below the engine: the engine registers its boards' indexes with it
    (`mongo.board_indexes_declare`, from `SolutionsConfig.ready()`), so the two never import
    each other in a circle."""
    package = ROOT / CORE / "mongo"
    offending = []
    for path in sorted(package.glob("*.py")):
        module = f"{CORE}.mongo.{path.stem}"
        offending += [
            f"{path.relative_to(ROOT)}:{line} imports {name}"
            for line, name in imported_names(path.read_text(), module)
            if name == f"{CORE}.leaderboard" or name.startswith(f"{CORE}.leaderboard.")
        ]
    assert len(list(package.glob("*.py"))) > 1, "the storage package's modules were not found"
    assert not offending, "\n".join(offending)


MODULE_LINES_MAX = 400  # the project's guideline: past it, a module is split by concern
FUNCTION_LINES_MAX = 40  # the guideline: past it, a function is split into named helpers
# Not the site's code: the tests (and their helpers), the schema's migrations, the virtualenv,
# the site's data and the front end's packages (hidden folders too).
NOT_THE_SITE = {".venv", "tests", "migrations", "var", "node_modules"}
# What the walk must find, so that the checks below cannot pass on nothing.
SITE_PARTS = {
    "solutions",
    "accounts",
    "activity",
    "competitions",
    "integrations",
    "demo",
    "leaderboard_site",
    "bench",
    "loadtest",
    "tools",
    "manage.py",
    "gunicorn.conf.py",
}


def site_python_files() -> dict[str, list[Path]]:
    """{package, or module at the root: its modules}, every Python module of the site found by
    walking the repository's root (tests, migrations and the folders of NOT_THE_SITE left out)."""
    found: dict[str, list[Path]] = {}
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = sorted(
            name for name in subfolders if name not in NOT_THE_SITE and not name.startswith(".")
        )
        for name in sorted(files):
            if name.endswith(".py"):
                path = Path(folder) / name
                found.setdefault(path.relative_to(ROOT).parts[0], []).append(path)
    return found


SITE = site_python_files()


def test_the_walk_finds_every_package_of_the_site_and_nothing_else():
    assert SITE_PARTS <= set(SITE), f"not found: {sorted(SITE_PARTS - set(SITE))}"
    assert len(SITE["solutions"]) > 50 and len(SITE["bench"]) > 5 and len(SITE["loadtest"]) > 5
    paths = [path.relative_to(ROOT) for paths in SITE.values() for path in paths]
    assert not [path for path in paths if NOT_THE_SITE & set(path.parts)]
    assert Path("solutions/leaderboard/__init__.py") in paths


@pytest.mark.parametrize("part", sorted(SITE))
def test_no_module_of_the_site_passes_400_lines(part):
    """Every module of the site reads in one sitting: the core's writes, reads, pages, storage
    and engine, the API, the apps above them, the bench, the load test and the tools. Each was
    split by concern once it passed the guideline (issue 37); one that grows past it again is
    split too."""
    lengths = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in SITE[part]
    }
    too_long = {name: lines for name, lines in lengths.items() if lines > MODULE_LINES_MAX}
    assert not too_long, f"modules over {MODULE_LINES_MAX} lines: {too_long}"


def long_functions(source: str, where: str) -> dict[str, int]:
    """{`where:function`: lines} of the functions in the source (methods and nested ones too)
    that pass the guideline, counted from their first decorator to their last line."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = node.end_lineno - first + 1
            if lines > FUNCTION_LINES_MAX:
                found[f"{where}:{node.name}"] = lines
    return found


def test_the_function_measure_counts_decorators_and_sees_methods():
    def lines(n: int, indent: str = "    ") -> str:
        return "".join(f"{indent}x{k} = {k}\n" for k in range(n))

    source = (
        f"def at_the_limit():\n{lines(FUNCTION_LINES_MAX - 1)}"
        f"@decorated\ndef decorated():\n{lines(FUNCTION_LINES_MAX - 1)}"
        f"class Holder:\n    def method(self):\n{lines(FUNCTION_LINES_MAX, ' ' * 8)}"
    )
    past = FUNCTION_LINES_MAX + 1
    assert long_functions(source, "m") == {"m:decorated": past, "m:method": past}


@pytest.mark.parametrize("part", sorted(SITE))
def test_no_function_of_the_site_passes_40_lines(part):
    """The site reads one function at a time: a longer one is split into helpers named for
    what they do (issue 37)."""
    too_long = {}
    for path in SITE[part]:
        too_long |= long_functions(path.read_text(), str(path.relative_to(ROOT)))
    assert not too_long, f"functions over {FUNCTION_LINES_MAX} lines: {too_long}"


TESTS = ROOT / "tests"
TEST_IMPORTS_LEFT: set[str] = set()  # none: a new one moves its helpers to tests/support/


def test_no_test_module_imports_another():
    """Helpers and fixtures that several test modules use live in tests/support/ (or, for
    fixtures every test may ask for, tests/conftest.py): a test module is never a library."""
    found = set()
    for path in sorted(TESTS.rglob("test_*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for _, name in imported_names(path.read_text(), module):
            parts = name.split(".")
            test_module = next(
                (
                    ".".join(parts[: i + 1])
                    for i, part in enumerate(parts)
                    if part.startswith("test_")
                ),
                None,
            )
            if parts[0] == "tests" and test_module and test_module != module:
                found.add(f"{path.relative_to(ROOT)} imports {test_module}")
    assert found <= TEST_IMPORTS_LEFT, "\n".join(sorted(found - TEST_IMPORTS_LEFT))


# --- the engine's front door ---------------------------------------------------------------------

ENGINE_PACKAGE = f"{CORE}.leaderboard"
# Everything outside the engine asks it through its front door (`solutions/leaderboard/__init__`):
# every package of the site (its root modules import no engine module).
OUTSIDE_THE_ENGINE = tuple(sorted(part for part in SITE_PARTS if not part.endswith(".py")))
# The one exception: `bench/structure/` measures the order structure itself (sets, tree,
# encoding, moves) at 1M to 100M members with no MongoDB, so it builds orders from the pure
# modules behind the door; its modules may import those alone.
BEHIND_THE_DOOR_ALLOWED = {
    "bench.structure": {"encoding", "maths", "moving", "order_documents", "sets", "tree"},
}


def allowed_behind_the_door(module: str) -> set[str]:
    """The modules behind the door that `module` may use: those of the exception it falls in
    (a package's modules share its exception), else none."""
    for owner, allowed in BEHIND_THE_DOOR_ALLOWED.items():
        if module == owner or module.startswith(f"{owner}."):
            return allowed
    return set()


def engine_submodules() -> set[str]:
    """The names of the engine's modules and packages (`reading`, `entries`, `front`, ...)."""
    return {
        path.stem if path.is_file() else path.name
        for path in ENGINE.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__")
        or (path.is_dir() and (path / "__init__.py").exists())
    }


def modules_outside_the_engine() -> list[tuple[Path, str]]:
    """(path, module) of every module outside the engine (a package's `__init__` named
    `<package>.__init__`, as `imported_names` takes it), tests and migrations left out."""
    found = []
    for top in OUTSIDE_THE_ENGINE:
        for path in sorted((ROOT / top).rglob("*.py")):
            if ENGINE in path.parents or "migrations" in path.relative_to(ROOT).parts:
                continue
            found.append((path, ".".join(path.relative_to(ROOT).with_suffix("").parts)))
    return found


def behind_the_door(source: str, module: str) -> list[tuple[int, str]]:
    """(line, submodule) of every use of a module behind the engine's front door in the source:
    imported (`from solutions.leaderboard import reading`, `from .leaderboard.entries import
    ...`, `import solutions.leaderboard.applier`, inside functions too) or reached as an
    attribute of the package (`leaderboard.reading.order_read`)."""
    submodules = engine_submodules()
    found = []
    for line, name in imported_names(source, module):
        parts = name.split(".")
        if parts[:2] == ENGINE_PACKAGE.split(".") and len(parts) > 2 and parts[2] in submodules:
            found.append((line, parts[2]))
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in submodules
            and isinstance(node.value, ast.Name)
            and node.value.id == "leaderboard"
        ):
            found.append((node.lineno, node.attr))
    return found


def test_the_front_door_check_sees_every_way_behind_it_and_lets_the_door_through():
    source = (
        "from solutions import leaderboard\n"
        "from solutions.leaderboard import Window, page\n"
        "from solutions.leaderboard import reading\n"
        "from ..leaderboard.days_kept import current_day\n"
        "import solutions.leaderboard.applier\n"
        "def late():\n"
        "    from ..leaderboard.entries import from_solves\n"
        "    return leaderboard.journals.journal_read('b'), leaderboard.page('b', '1', '', 0, 1)\n"
    )
    found = behind_the_door(source, "solutions.services.solves")
    assert found == [
        (3, "reading"),
        (4, "days_kept"),
        (5, "applier"),
        (7, "entries"),
        (8, "journals"),
    ]
    assert {"front", "reading", "entries", "applier"} <= engine_submodules()


def test_the_modules_outside_the_engine_are_found():
    modules = {module for _, module in modules_outside_the_engine()}
    assert {"solutions.selectors.standings", "activity.services.history", "bench.seed"} <= modules
    assert {"loadtest.verdict.request_log", "tools.solve_costs", "solutions.clock"} <= modules
    assert not any(module.startswith(f"{ENGINE_PACKAGE}.") for module in modules)


def test_nothing_outside_the_engine_goes_behind_its_front_door():
    """Everybody asks the engine through its front door (`solutions.leaderboard`: a page, a
    standing, a solve counted, what is pending placed, a rebuild, ... and the pure maths), never
    a module behind it, so the engine can change behind the door without the site knowing
    (issue 37). `bench/structure/` alone builds orders from the pure modules it measures."""
    offending = []
    for path, module in modules_outside_the_engine():
        allowed = allowed_behind_the_door(module)
        offending += [
            f"{path.relative_to(ROOT)}:{line} uses leaderboard.{submodule}"
            for line, submodule in behind_the_door(path.read_text(), module)
            if submodule not in allowed
        ]
    assert not offending, "\n".join(sorted(set(offending)))


def test_the_bench_of_the_order_structure_still_needs_its_exception():
    """The exception is as small as it can be: every module it allows is still used, and by
    the bench of the order structure alone."""
    for owner, allowed in BEHIND_THE_DOOR_ALLOWED.items():
        used = {
            submodule
            for path, module in modules_outside_the_engine()
            if module == owner or module.startswith(f"{owner}.")
            for _, submodule in behind_the_door(path.read_text(), module)
        }
        assert used == allowed, owner
