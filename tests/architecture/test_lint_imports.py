"""The static linter installs and runs without torch (its pre-commit hook's
environment has none): every module under autograd_doctor/lint/ imports only
the standard library and other modules of lint/, also inside functions."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

LINT_DIR = Path(__file__).resolve().parents[2] / "src" / "autograd_doctor" / "lint"


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom):
            names.add("autograd_doctor.lint")  # relative: inside the package
    return names


def test_lint_imports_only_the_standard_library_and_itself():
    outside = {}
    for path in sorted(LINT_DIR.rglob("*.py")):
        for name in imported_modules(path):
            top = name.split(".")[0]
            if name == "autograd_doctor.lint" or name.startswith("autograd_doctor.lint."):
                continue
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            outside.setdefault(str(path.relative_to(LINT_DIR)), []).append(name)
    # flake8 calls the plugin; the plugin imports nothing of flake8's
    assert outside == {}


def test_the_package_init_imports_no_torch():
    init = LINT_DIR.parent / "__init__.py"
    assert all(not name.startswith("torch") for name in imported_modules(init))
