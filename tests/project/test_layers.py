"""The layer contract of docs/architecture.md: `lint-imports` with the contracts in pyproject.toml must pass, and
no module is part of an import cycle (imports inside functions count, `if TYPE_CHECKING:` imports do not), and an
import of our own modules inside a function says why (`# lazy: <reason>`).

Catalog-only: no Spark fixture, so it runs in the Spark-free lane too.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def _function_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Import statements inside function bodies (methods and nested functions included)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(tree, False)
    return found


def _is_ours(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "spark_ducklake"
    return any(alias.name.split(".")[0] == "spark_ducklake" for alias in node.names)


def _says_why(lines: list[str], lineno: int) -> bool:
    """`# lazy: <reason>` on the import's line, or on the comment line right above its run of imports."""
    if re.search(r"# lazy: \S", lines[lineno - 1]):
        return True
    above = lineno - 2
    while above >= 0 and lines[above].strip().startswith(("from ", "import ")):
        above -= 1
    return above >= 0 and re.match(r"\s*# lazy: \S", lines[above]) is not None


def test_imports_of_our_modules_inside_functions_say_why():
    """Our modules are imported at the top of a module; one imported inside a function says why on its line with
    `# lazy: <reason>` (docs/architecture.md: a module executors import must not load the catalog's dependencies,
    the facade must not load pyspark)."""
    found = []
    for path in sorted((ROOT / "src" / "spark_ducklake").rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        found += [f"{path.relative_to(ROOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}"
                  for node in _function_imports(ast.parse(text))
                  if _is_ours(node) and not _says_why(lines, node.lineno)]
    assert not found, ("imports of our modules inside functions, without a `# lazy: <reason>` comment (move them "
                       "to the module's top):\n" + "\n".join(found))
