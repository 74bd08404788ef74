"""Run a script as `__main__`, as `python script.py` does (for `autograd-doctor run` and the
oracle run of `--verify-fix`): the same `sys.argv`, `sys.path[0]`, `__file__`, `__loader__`,
`__builtins__`, and a fresh `__main__` module."""

from __future__ import annotations

import builtins
import importlib.machinery
import os
import sys
import types


def fresh_main_module() -> types.ModuleType:
    """`__main__` as the interpreter makes it at startup, before running the program."""
    main_module = types.ModuleType("__main__")
    main_module.__annotations__ = {}
    main_module.__builtins__ = builtins
    sys.modules["__main__"] = main_module
    return main_module


def run_script(path: str, args: list[str]) -> None:
    """As `python path args`: `__file__` absolute (python does so since 3.9), a
    SourceFileLoader, sys.argv[0] as typed, sys.path[0] the script's real directory."""
    # python joins the current directory and the path as typed, without normalising it.
    filename = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    with open(filename, "rb") as stream:
        source = stream.read()
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(os.path.realpath(filename))
    code = compile(source, filename, "exec", dont_inherit=True)
    main_module = fresh_main_module()
    main_module.__file__ = filename
    main_module.__cached__ = None
    main_module.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    try:
        exec(code, main_module.__dict__)
    finally:
        # python removes them once the script is done (atexit handlers do not see them).
        main_module.__dict__.pop("__file__", None)
        main_module.__dict__.pop("__cached__", None)
