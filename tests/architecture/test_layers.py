"""The package's imports follow its layers, in the order data flows (docs/architecture.md):

    compat -> recording -> diagnosis -> analysis -> report -> doctor -> integrations, cli

A module may import its own layer and the layers before it, never one after it: the
recorder knows nothing of diagnoses, the analysis nothing of how a report is printed, the
doctor nothing of pytest. Every import counts, also one inside a function (a lazy import
is a dependency all the same). The command line and the integrations are one layer, the
front ends: `autograd-doctor run` re-runs a program as the pytest plugin re-runs a test.
The linter (`lint/`) stands apart: it imports nothing of the rest (test_lint_imports.py),
so anything may import it.

The package root (`autograd_doctor/__init__.py`, the public API, which imports on first
use) and the shims that keep old import paths working sit above everything; they are
listed here by name, so a new module cannot join them by accident.
"""

from __future__ import annotations

import ast

from test_import_cycles import package_modules

PACKAGE = "autograd_doctor"

# Layer of each part of the package, in data order.
LAYERS = {
    "compat": 0,
    "lint": 0,  # the static linter: imports only the standard library and itself
    "recording": 1,
    "diagnosis": 2,
    "analysis": 3,
    "report": 4,
    "doctor": 5,
    "integrations": 6,
    "cli": 6,
}
TOP = 7

# Modules that only keep an import path working, and the public API: above every layer.
SHIMS = {
    "autograd_doctor",  # the public API: `autograd_doctor.watch`, ... imported on first use
    "autograd_doctor.__main__",  # `python -m autograd_doctor`
    "autograd_doctor.compiled",
    "autograd_doctor.huggingface",
    "autograd_doctor.ipython",
    "autograd_doctor.lightning",
    "autograd_doctor.pytest_plugin",
    "autograd_doctor.pytorch_lightning",
    "autograd_doctor.startup",
    "autograd_doctor.verify_fix",
}


def layer_of(module: str) -> int:
    if module in SHIMS:
        return TOP
    part = module.split(".")[1]
    assert part in LAYERS, f"{module} is in no layer: add its folder to LAYERS (and to docs/architecture.md)"
    return LAYERS[part]


def public_names() -> dict[str, str]:
    """`from autograd_doctor import watch`: the package root's public name -> its module."""
    import autograd_doctor

    return dict(autograd_doctor._EXPORTS)


def imports_of(path: str, modules: dict[str, str], exports: dict[str, str]) -> list[tuple[str, int]]:
    """(module of ours imported, line) for each import in the file: `from pkg import sub`
    imports the submodule, `from autograd_doctor import watch` the module that defines
    `watch`. The root's own constants (`__version__`, TORCH_MISSING) belong to no layer:
    the root's body imports nothing."""
    with open(path, encoding="utf-8") as stream:
        tree = ast.parse(stream.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names
                      if alias.name.startswith(PACKAGE + ".")]
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.append(("autograd_doctor.lint", node.lineno))  # only lint/ imports relatively
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == PACKAGE:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if name in modules:
                    found.append((name, node.lineno))
                elif node.module == PACKAGE:
                    if alias.name in exports:
                        found.append((exports[alias.name], node.lineno))
                else:
                    found.append((node.module, node.lineno))
    return found


def violations(modules: dict[str, str] | None = None, exports: dict[str, str] | None = None) -> list[str]:
    modules = package_modules() if modules is None else modules
    exports = public_names() if exports is None else exports
    found = []
    for module, path in sorted(modules.items()):
        own = layer_of(module)
        for name, line in imports_of(path, modules, exports):
            if name not in modules:
                found.append(f"{module}:{line} imports {name}, which does not exist")
            elif layer_of(name) > own:
                found.append(f"{module}:{line} imports {name}, a later layer")
    return found


def test_no_import_runs_against_the_layer_order():
    assert violations() == []


def test_every_module_is_in_a_layer():
    for module in package_modules():
        layer_of(module)


def test_the_shims_only_point_to_their_new_place():
    """A shim is a few lines that make the old name the new module; it holds no code."""
    modules = package_modules()
    for shim in SHIMS - {PACKAGE, "autograd_doctor.__main__"}:
        with open(modules[shim], encoding="utf-8") as stream:
            tree = ast.parse(stream.read())
        kinds = {type(node).__name__ for node in tree.body}
        assert kinds <= {"Expr", "Import", "ImportFrom", "Assign"}, (shim, kinds)


def test_the_check_finds_an_import_against_the_order(tmp_path):
    package = tmp_path / "autograd_doctor"
    files = {
        "autograd_doctor": "__init__.py",
        "autograd_doctor.recording": "recording/__init__.py",
        "autograd_doctor.recording.recorder": "recording/recorder.py",
        "autograd_doctor.report": "report/__init__.py",
        "autograd_doctor.report.text": "report/text.py",
        "autograd_doctor.doctor": "doctor.py",
    }
    source = {
        "recording/recorder.py": "def f():\n    from autograd_doctor.report.text import render\n"
                                 "from autograd_doctor import __version__\n",
        "report/text.py": "from autograd_doctor.recording import recorder\nfrom autograd_doctor import watch\n"
                          "import autograd_doctor.analysis.gone\n",
    }
    for relative in files.values():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(source.get(relative, ""))
    modules = {name: str(package / relative) for name, relative in files.items()}
    assert violations(modules, {"watch": "autograd_doctor.doctor"}) == [
        "autograd_doctor.recording.recorder:2 imports autograd_doctor.report.text, a later layer",
        "autograd_doctor.report.text:2 imports autograd_doctor.doctor, a later layer",
        "autograd_doctor.report.text:3 imports autograd_doctor.analysis.gone, which does not exist",
    ]
