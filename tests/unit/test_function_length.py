"""No function of the library or the benchmarks is over 60 lines (issue 17): a long one is split into named steps.

A function's length is counted from its ``def`` line to its last line (decorators not counted), nested
functions included in their parent and also counted on their own. Every ``.py`` file under ``PACKAGES`` is
parsed with ``ast``.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from cubesage_core.settings import REPO_ROOT

PACKAGES = ("router", "fourengine", "sag_index", "answer", "cube_models", "cubesage_core", "bench")
MAX_LINES = 60


def _long_functions(source: str, name: str) -> list[str]:
    """``file:line name (N lines)`` for each function of ``source`` over ``MAX_LINES`` lines."""
    found = []
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_LINES:
                found.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
    return found


def _sources() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (REPO_ROOT / package).rglob("*.py"))


def test_the_packages_are_there() -> None:
    missing = [package for package in PACKAGES if not (REPO_ROOT / package).is_dir()]
    assert not missing, f"packages not found under {REPO_ROOT}: {missing}"
    assert len(_sources()) > 50


def test_no_function_over_60_lines() -> None:
    offenders = [
        line
        for path in _sources()
        for line in _long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))
    ]
    assert not offenders, (
        f"{len(offenders)} function(s) over {MAX_LINES} lines; split them into named steps:\n" + "\n".join(offenders)
    )


def _function(name: str, lines: int, *, is_async: bool = False) -> str:
    body = "\n".join(f"    x{i} = {i}" for i in range(lines - 1))
    return f"{'async ' if is_async else ''}def {name}() -> None:\n{body}\n"


def test_the_check_counts_def_to_last_line() -> None:
    assert _long_functions(_function("fits", MAX_LINES), "m.py") == []
    assert _long_functions(_function("long", MAX_LINES + 1), "m.py") == ["m.py:1 long (61 lines)"]
    assert _long_functions(_function("slow", MAX_LINES + 5, is_async=True), "m.py") == ["m.py:1 slow (65 lines)"]


def test_the_check_finds_methods_and_nested_functions() -> None:
    nested = "def outer() -> None:\n" + textwrap.indent(_function("inner", MAX_LINES + 1), "    ")
    assert _long_functions(nested, "n.py") == ["n.py:1 outer (62 lines)", "n.py:2 inner (61 lines)"]
    method = "class C:\n" + textwrap.indent(_function("method", MAX_LINES + 2), "    ")
    assert _long_functions(method, "c.py") == ["c.py:2 method (62 lines)"]
