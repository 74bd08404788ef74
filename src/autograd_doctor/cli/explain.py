"""`autograd-doctor explain CODE`: the long explanation of a diagnosis or lint code."""

from __future__ import annotations

import os
import sys

from autograd_doctor.diagnosis import codes


def explain_text(code: str) -> str | None:
    text = codes.explanation(code)
    if text is not None:
        return text
    try:
        from autograd_doctor.lint.rules import rule_documentation
    except Exception:
        return None
    return rule_documentation(code.upper())


def explain_main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        if argv and argv[0] in ("-h", "--help"):
            print("usage: autograd-doctor explain CODE")
            return 0
        print("autograd-doctor explain: error: expected exactly one diagnosis code, e.g. AD101", file=sys.stderr)
        return 2
    text = explain_text(argv[0])
    if text is None:
        print(f"autograd-doctor explain: error: unknown code {argv[0]!r}", file=sys.stderr)
        return 2
    try:
        print(text.rstrip())
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`autograd-doctor explain AD101 | head`): stop quietly, with
        # stdout on /dev/null so that the flush at exit does not fail again (as lint does).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
