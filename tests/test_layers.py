"""The layer contract of docs/architecture.md: `lint-imports` with the contracts in pyproject.toml must pass, and
no module is part of an import cycle (imports inside functions count, `if TYPE_CHECKING:` imports do not).

Catalog-only: no Spark fixture, so it runs in the Spark-free lane too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# In a subprocess: import-linter puts the working directory on sys.path and configures logging for the process.
LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"


def test_imports_follow_the_layers():
    pytest.importorskip("importlinter", reason="import-linter comes with the `test` extra")
    run = subprocess.run([sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"an import breaks the layers (docs/architecture.md):\n{run.stdout}{run.stderr}"


def _cycles(graph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), a module's parent package not counted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.find_modules_directly_imported_by(module):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_is_part_of_an_import_cycle():
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the `test` extra)")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    graph = grimp.build_graph("spark_ducklake", exclude_type_checking_imports=True)
    assert _cycles(graph) == []


def test_no_private_name_is_imported_from_another_module():
    """A `_name` is its module's own: what another module needs is public in the module that defines it."""
    found = []
    for path in sorted((ROOT / "src" / "spark_ducklake").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 0 and not (node.module or "").startswith("spark_ducklake"):
                continue  # another package's names are its business
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {name} from {node.module}" for name in private]
    assert not found, "private names imported across modules:\n" + "\n".join(found)
