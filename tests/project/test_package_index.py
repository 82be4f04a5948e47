"""Every package's `__init__` docstring is an index of its modules: it names each module and subpackage the
package has (`name.py`, `name/`), and names none that is gone (issue 29, item 5)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "src" / "spark_ducklake"
PACKAGES = sorted(p.parent for p in ROOT.rglob("__init__.py"))
# `name.py` or `name/` standing alone: not the tail of a path (`catalog/conflicts.py`), not the head of one
# (`tests/test_x.py`, `spark/jvm/...`).
NAMED = re.compile(r"(?<![\w/.-])([A-Za-z_][A-Za-z0-9_]*)(\.py\b|/(?![\w.]))")


def members(package: Path) -> set[str]:
    """The package's modules (`x.py`) and subpackages (`x/`), as its index names them."""
    modules = {f"{p.name}" for p in package.glob("*.py") if p.name != "__init__.py"}
    subpackages = {f"{p.parent.name}/" for p in package.glob("*/__init__.py")}
    return modules | subpackages


def named(package: Path) -> set[str]:
    """The modules and subpackages the package's docstring names."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    return {name + suffix for name, suffix in NAMED.findall(doc)}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_init_docstring_indexes_every_module(package):
    missing = members(package) - named(package)
    gone = named(package) - members(package)
    assert not missing, f"{package / '__init__.py'}: its docstring does not name {sorted(missing)}"
    assert not gone, f"{package / '__init__.py'}: its docstring names {sorted(gone)}, not in the package"


def test_the_index_pattern_reads_the_index_forms():
    """What counts as naming a module: the forms the indexes use, and not paths into other packages."""
    text = ("- a.py  x; b.py: y\n- c/  z\n- d.py, e.py  w (see catalog/conflicts.py, tests/test_f.py, spark/jvm/)\n"
            "pyproject.toml's contract")
    assert {n + s for n, s in NAMED.findall(text)} == {"a.py", "b.py", "c/", "d.py", "e.py"}


def test_tests_live_in_folders_that_follow_the_package():
    """No test module at the top of tests/; each folder of tests is a documented package (issue 29, item 5)."""
    tests = ROOT.parents[1] / "tests"
    assert sorted(p.name for p in tests.glob("test_*.py")) == []
    folders = [p.parent for p in tests.glob("*/test_*.py")]
    assert folders, "no test folders found"
    docs = {f.name: ast.get_docstring(ast.parse((f / "__init__.py").read_text())) for f in folders}
    undocumented = sorted(name for name, doc in docs.items() if not doc)
    assert undocumented == []
