"""The layer contract of docs/architecture.md: `lint-imports` with the contracts in pyproject.toml must pass.

Catalog-only: no Spark fixture, so it runs in the Spark-free lane too.
"""

from __future__ import annotations

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
