"""ADL021: an out-of-place tensor operation used as a statement: its result is
thrown away, so the line changes nothing (`torch.clamp(self.w, 1e-6)`,
`scores.masked_fill(~mask, 0)`)."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL021", name="out-of-place-result-discarded",
    summary="An out-of-place tensor operation whose result is thrown away: the line changes nothing.",
    what_it_does="""Finds a call used as a whole statement, its value unused, of a
tensor operation that returns a new tensor and leaves its input as it was:
* a `torch.` function that computes new values (`torch.clamp(self.w, 1e-6)`,
  `torch.sigmoid(x)`, `torch.masked_fill(...)`), without `out=`;
* a tensor method that only tensors have (`x.masked_fill(mask, 0)`,
  `x.clamp(min=0)`, `x.index_fill(...)`, `x.scatter_add(...)`), on any
  receiver;
* a method that other libraries' objects have too (`x.add(1)`, `x.mul(2)`,
  `x.abs()`, `x.sigmoid()`...), only on a receiver known to be a tensor;
* `x.detach()` on a name known to carry a graph (computed, with gradients
  on, from a module with parameters or a leaf that requires grad): the name
  keeps its graph, so gradients still flow where the line meant to stop them
  (a DQN's `next_q.detach()` before the TD target).
Calls inside a `try:` body or a `with pytest.raises(...)` /
`self.assertRaises(...)` block (run for the error they raise) are not
reported.""",
    why_bad="""PyTorch names an operation that changes its input with a trailing
underscore (`clamp_`, `masked_fill_`, `add_`, `sigmoid_`); the name
without it returns a new tensor.  Called as a statement, that new tensor is
thrown away: the weight the line meant to keep positive is not clamped, the
padding is not masked, the activation is not applied.
Nothing raises; training is silently different from what the code says.""",
    example="""torch.clamp(self.w, 1e-6)
scores.masked_fill(~mask, float("-inf"))""",
    use_instead="""w = torch.clamp(self.w, 1e-6)     # and use `w` where `self.w` was read
scores = scores.masked_fill(~mask, float("-inf"))""",
    fix_safety="""Unsafe: where the operand is a plain name, the fix binds the result to
it (`scores = scores.masked_fill(...)`), which changes what the program
computes (as the line meant).  An attribute or an indexed operand gets no fix:
assigning a new tensor to a module's parameter raises, and the in-place form
may conflict with autograd; write the change by hand.""",
    known_problems="""Operations that only reshape or copy (`x.view(n, -1)`,
`x.unsqueeze(0)`, `x.contiguous()`), and `x.detach()` of a name not known to
carry a graph, are not reported, though thrown away they change nothing
either: on real code they were mostly harmless dead lines.  A method of a user class with the name of a tensor-only
method (`obj.clamp(...)` that clamps in place) is reported.""",
)

# torch functions that compute new values and change none of their arguments (with no `out=`).
# Operations that only reshape, copy or detach are left out: thrown away, they are mostly dead
# code that harms nothing (`x.view(n, -1)` where `x` has that shape already).
PURE_FUNCTIONS = frozenset("""
abs add addcdiv addcmul clamp clamp_max clamp_min clip cos cumsum div exp flip index_add index_copy index_fill lerp
log log_softmax masked_fill masked_scatter mul neg pow reciprocal relu roll rsqrt scatter scatter_add sigmoid sign
sin softmax sqrt square sub tanh tril triu where
""".split())

# Tensor methods that compute new values and that other common objects (numpy, pandas,
# matplotlib, nn.Module) do not have: reported on any receiver.
TENSOR_ONLY_METHODS = frozenset("""
masked_fill masked_scatter index_fill index_add index_copy scatter_add clamp clamp_min clamp_max
""".split())

# Methods that other objects have too (numpy arrays, pandas frames, matplotlib axes): reported
# only on a receiver known to be a tensor.
SHARED_METHODS = frozenset("""
abs add sub mul div neg exp log sqrt pow sigmoid tanh relu softmax log_softmax clip cumsum flip roll lerp addcmul
addcdiv reciprocal rsqrt sign sin cos square tril triu scatter
""".split())

# Those with an in-place twin (`clamp_`): `torch.Tensor` has `<name>_` for each (torch 2.13).
HAS_INPLACE_FORM = frozenset("""
abs add addcdiv addcmul clamp clamp_max clamp_min clip cos cumsum div exp index_add index_copy index_fill lerp log
masked_fill masked_scatter mul neg pow reciprocal relu rsqrt scatter scatter_add sigmoid sign sin sqrt square sub
tanh tril triu
""".split())


def on_call(checker, node, q) -> None:
    """`torch.clamp(self.w, 1e-6)` as a statement."""
    # The set look-up first: the walk calls this hook for every call of the file.
    if not (q.startswith("torch.") and q[6:] in PURE_FUNCTIONS and q.count(".") == 1 and node.args
            and checker.statement_is(node)) or _writes_out(node) or checker.error_expected:
        return
    checker.scope.note("ADL021", (node, f"`{q}(...)`", q[6:], node.args[0]))


def on_method_call(checker, node, func) -> None:
    """`x.masked_fill(mask, 0)` as a statement."""
    attr = func.attr
    if attr not in TENSOR_ONLY_METHODS and attr not in SHARED_METHODS and attr != "detach":
        return
    if not checker.statement_is(node) or _writes_out(node) or checker.error_expected:
        return
    if attr == "detach":
        # Thrown away, `detach()` is harmless dead code unless the name keeps a graph that
        # the line meant to cut: only then is it reported.
        if isinstance(func.value, ast.Name) and not node.args and checker.is_graph(func.value):
            checker.scope.note("ADL021", (node, "`.detach()`", attr, func.value))
        return
    if attr in TENSOR_ONLY_METHODS or checker.is_tensor(func.value):
        checker.scope.note("ADL021", (node, f"`.{attr}({'...' if node.args or node.keywords else ''})`", attr,
                                      func.value))


def check_scope(checker, scope) -> None:
    for node, shown, op, operand in scope.noted("ADL021"):
        remedy = f"the in-place form is `{op}_`; or assign the result" if op in HAS_INPLACE_FORM else "assign the result"
        message = f"{shown} returns a new tensor and the result is thrown away: this line changes nothing ({remedy})"
        if op == "detach":
            message = (f"`.detach()` returns a new tensor and the result is thrown away: `{operand.id}` keeps its "
                       "graph, so gradients still flow through it where this line meant to stop them "
                       f"(assign the result: `{operand.id} = {operand.id}.detach()`)")
        fix = None
        if isinstance(operand, ast.Name):
            fix = Fix(f"assign the result: `{operand.id} = ...`",
                      (checker.insert_before(node, f"{operand.id} = "),), safe=False)
        checker.report("ADL021", node, message, fix)


def _writes_out(call) -> bool:
    """`out=` writes the result; `inplace=True` is no torch op's keyword (kornia's
    `boxes.clamp(..., inplace=True)` changes its object)."""
    return any(keyword.arg in ("out", "inplace") for keyword in call.keywords)
