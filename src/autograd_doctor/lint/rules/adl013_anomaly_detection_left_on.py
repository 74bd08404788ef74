"""ADL013 (opt-in advice): anomaly detection left on."""

from __future__ import annotations

import ast

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
code="ADL013", name="anomaly-detection-left-on", default=False,
summary="Anomaly detection is switched on outside a debug guard.",
what_it_does="""Finds `torch.autograd.set_detect_anomaly(True)`, `with
torch.autograd.detect_anomaly():` and `@torch.autograd.detect_anomaly()`
that are not inside an `if` whose condition mentions a debug or anomaly flag
(`if args.debug:`, `if DEBUG:`, `if __debug__:`, `if cfg.detect_anomaly:`) or
inside a function whose name contains `debug`.""",
why_bad="""Anomaly mode records a Python stack for every op and checks every
backward output for NaN: about 2x to 8x slower training steps (measured by
`benchmarks/overhead.py`).  It is a debugging tool
that is easy to forget in committed code.""",
example="torch.autograd.set_detect_anomaly(True)",
use_instead="""if args.debug:
    torch.autograd.set_detect_anomaly(True)""",
fix_safety="No automatic fix.",
known_problems="""`set_detect_anomaly(flag)` with a non-constant argument is not reported;
neither is anything in a function whose name mentions debugging.""",
)


SET_DETECT_ANOMALY = ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly")
DETECT_ANOMALY = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")


def on_call(checker, node, q) -> None:
    """Anomaly mode switched on outside a debug guard and outside a `with` block
    (which switches it off again)."""
    if q not in SET_DETECT_ANOMALY and q not in DETECT_ANOMALY:
        return
    if checker.guard_depth or getattr(node, "_adl_context", False):
        return
    first = node.args[0] if node.args else None
    if q in SET_DETECT_ANOMALY and isinstance(first, ast.Constant) and first.value is True:
        checker.scope.note("ADL013", (node, "anomaly detection is switched on unconditionally; it "
                                            "slows every forward and backward pass"))
    elif q in DETECT_ANOMALY and not (isinstance(first, ast.Constant) and first.value is False):
        checker.scope.note("ADL013", (node, "`detect_anomaly()` is left on unconditionally; it "
                                            "slows every forward and backward pass"))


def check_scope(checker, scope) -> None:
    for node, message in scope.noted("ADL013"):
        checker.report("ADL013", node, message)
