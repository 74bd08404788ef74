"""ADL002 (opt-in): an in-place activation overwrites an input that is read again."""

from __future__ import annotations

from autograd_doctor.lint.rules.adl001_write_to_saved_tensor import rewrite_fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL002", name="inplace-activation-input-reused", default=False,
    summary="An in-place activation overwrites its input, and the input is used again afterwards.",
    what_it_does="""Finds `F.relu(x, inplace=True)` and the other functionals that take
`inplace=` (`relu6`, `elu`, `selu`, `celu`, `leaky_relu`, `hardtanh`, `silu`,
`mish`, `hardswish`, `hardsigmoid`, `threshold`, `dropout`...), `torch.relu_(x)`,
and calls of a module attribute built with `inplace=True` in `__init__`
(`self.act = nn.ReLU(inplace=True)` ... `y = self.act(x)`), but only when
`x` is read again later in the same function without being re-bound.""",
    why_bad="""After the call, `x` holds the activated values.  A later use of `x` (a
residual connection, a second branch, logging) silently sees them, or, if
an op saved `x` for backward, `backward()` fails.""",
    example="""h = F.relu(x, inplace=True)
return h + x        # x now holds relu(x), not the input

# the same with a module: self.act = nn.ReLU(inplace=True) in __init__,
# then h = self.act(x) in forward() followed by a use of x""",
    use_instead="""h = F.relu(x)
return h + x""",
    fix_safety="""Unsafe: `inplace=True` becomes `inplace=False`.  The later uses then see
the input's original values, which is what the code almost always means,
but it is a change of behaviour (and of memory use), so it needs
`--unsafe-fixes`.""",
    known_problems="""Opt-in (`--select ADL002`): on two fresh sets of held-out repositories
(docs/lint.md, fifth check) its first runs gave 2 findings, both false alarms,
and no held-out check has shown a real one; whether the later reader wants
the activated values is a question of intent the linter cannot settle.  (A
write that breaks backward is ADL001's, which stays on.)
`x = F.relu(x, inplace=True)` (re-binding the name) is fine and not
reported, and so is a call used as a statement, its result thrown away
(`F.threshold(s, 1, 1, inplace=True)`): there the change of `s` is the
point.  A read of only the size (`x.size(0)`, `x.shape`) is not a use.
`nn.Sequential` whose first layer is in place, and same-file module classes
whose `forward` writes its argument, count too; modules passed in from
outside are not tracked.""",
)


def check_scope(checker, scope) -> None:
    for seq, name, node, rewrite, module in scope.inplace_calls:
        if id(node) in scope.reported:
            continue
        if checker.statement_is(node):
            # `F.threshold(s, 1, 1, inplace=True)` as a statement, its result thrown
            # away: the in-place change of `s` is what the code is for
            continue
        if scope.used_after(name, seq):
            what = module or "this in-place activation"
            checker.report("ADL002", node,
                           f"{what} overwrites `{name}`, which is used again afterwards and will "
                           f"see the activated values", rewrite_fix(checker, node, rewrite))
            scope.reported.add(id(node))
