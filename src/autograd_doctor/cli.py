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
        from autograd_doctor.runner import run_command
        return run_command(rest)
    if command == "lint":
        from autograd_doctor.lint.cli import lint_main
        return lint_main(rest)
    if command == "explain":
        from autograd_doctor.explain import explain_main
        return explain_main(rest)
    if command in ("--version", "-V"):
        from autograd_doctor import __version__
        print(f"autograd-doctor {__version__}")
        return 0
    return fail_usage(f"unknown command {command!r} (expected run, lint or explain)")


if __name__ == "__main__":
    sys.exit(main())
