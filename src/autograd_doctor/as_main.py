"""Run a script as `__main__`, as `python script.py` does (for `autograd-doctor run` and the oracle
run of `--verify-fix`): same `sys.argv`, `sys.path[0]`, `__file__`, and a fresh `__main__`."""

from __future__ import annotations

import os
import sys
import types


def run_script(path: str, args: list[str]) -> None:
    with open(path, "rb") as stream:
        source = stream.read()
    code = compile(source, path, "exec", dont_inherit=True)
    main_module = types.ModuleType("__main__")
    main_module.__file__ = path
    main_module.__builtins__ = __builtins__
    main_module.__cached__ = None
    sys.modules["__main__"] = main_module
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    exec(code, main_module.__dict__)
