"""The package's modules import each other without cycles, and each imports on its own.

The import graph is read from the source with `ast` (every `import` and `from ... import`,
also those inside functions, since a lazy import is a dependency all the same).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "src", "autograd_doctor")

def package_modules() -> dict[str, str]:
    modules = {}
    root = os.path.dirname(PACKAGE_DIR)
    for directory, _, files in os.walk(PACKAGE_DIR):
        for file in files:
            if file.endswith(".py"):
                path = os.path.join(directory, file)
                name = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                modules[name.removesuffix(".__init__")] = path
    return modules


def import_graph(modules: dict[str, str]) -> dict[str, set[str]]:
    """module -> the package's modules it imports (`from pkg import submodule` counts as the submodule)."""
    graph = {}
    for name, path in modules.items():
        with open(path, encoding="utf-8") as stream:
            tree = ast.parse(stream.read(), path)
        imported: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                submodules = [f"{node.module}.{alias.name}" for alias in node.names
                              if f"{node.module}.{alias.name}" in modules]
                imported.update(submodules)
                if node.module in modules and len(submodules) < len(node.names):
                    imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names if alias.name in modules)
        graph[name] = imported - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle():
    found = cycles(import_graph(package_modules()))
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_report_model_and_naming_keep_to_their_layer():
    graph = import_graph(package_modules())
    # The model imports nothing of ours but the Mode enum (a module that imports nothing).
    assert {m for m in graph["autograd_doctor.diagnosis.model"] if m.startswith("autograd_doctor.")} <= {
        "autograd_doctor.recording.modes"}
    assert not graph["autograd_doctor.recording.modes"]
    assert not {m for m in graph["autograd_doctor.analysis.naming"] if m.startswith("autograd_doctor.report")}
    assert "autograd_doctor.analysis.gradient_path" not in graph["autograd_doctor.analysis.backward_twice"]


# Each module is imported in a process that has imported torch but nothing of ours: a
# fork of one interpreter per module, so the check costs one torch import, not sixty. As many
# forks run at once as there are cores: the 300 modules take minutes one after another.
FRESH_IMPORTS = r"""
import os, sys, traceback
import torch
failed = []
running = {}
names = list(sys.argv[1:])
while names or running:
    while names and len(running) < max(1, os.cpu_count() or 1):
        name = names.pop(0)
        pid = os.fork()
        if pid == 0:
            try:
                __import__(name)
            except BaseException:
                traceback.print_exc()
                os._exit(1)
            os._exit(0)
        running[pid] = name
    pid, status = os.wait()
    if status != 0:
        failed.append(running[pid])
    del running[pid]
print("FAILED:" + ",".join(sorted(failed)))
"""


def test_each_module_imports_in_a_fresh_interpreter():
    names = sorted(name for name in package_modules() if not name.endswith("__main__"))  # that one runs the CLI
    result = subprocess.run([sys.executable, "-c", FRESH_IMPORTS, *names], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "FAILED:", result.stdout + result.stderr[-3000:]
