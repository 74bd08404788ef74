"""Command line: `autograd-doctor run|lint|explain ...`. Parse, call the API, print."""

from __future__ import annotations

import sys

USAGE = """\
usage: autograd-doctor <command> [options]

commands:
  run [--json PATH] [--strict] script.py [args...]   run a program under the doctor
  run --verify-fix script.py [args...]               ... and check the helps on a copy against an oracle
  run --diff | --fix script.py [args...]             ... and show the checked change, or write it if verified
  run [...] -m module [args...]                      run a module as __main__
  lint [options] PATH...                              find hazards statically
  explain CODE                                        explain a diagnosis code
"""


def fail_usage(message: str) -> int:
    print(f"autograd-doctor: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        return fail_usage("no command given (run, lint or explain); see autograd-doctor --help")
    if argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    command, rest = argv[0], argv[1:]
    if command == "run":
        runner = _runtime_module("autograd_doctor.cli.runner")
        return runner.run_command(rest) if runner is not None else 2
    if command == "lint":
        from autograd_doctor.lint.cli import lint_main
        return lint_main(rest)
    if command == "explain":
        explain = _runtime_module("autograd_doctor.cli.explain")
        return explain.explain_main(rest) if explain is not None else 2
    if command in ("--version", "-V"):
        from autograd_doctor import __version__
        print(f"autograd-doctor {__version__}")
        return 0
    return fail_usage(f"unknown command {command!r} (expected run, lint or explain)")


def _runtime_module(name: str):
    """Import a part of the run-time doctor; without torch, say so in one line (and
    return None).  Only the import is guarded: the user's own program, run later,
    raises what it raises.  torch itself is only looked for, not imported: the
    runner imports it when the program does (after its own environment settings)."""
    import importlib
    import importlib.util

    from autograd_doctor import TORCH_MISSING, torch_missing
    if name == "autograd_doctor.cli.runner" and importlib.util.find_spec("torch") is None:
        fail_usage(TORCH_MISSING)
        return None
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if not torch_missing(e):
            raise
        fail_usage(TORCH_MISSING)
        return None

