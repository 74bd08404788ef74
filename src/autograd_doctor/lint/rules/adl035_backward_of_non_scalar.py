"""ADL035: `backward()` with no `gradient=` of a loss that keeps a dimension
(`sum(dim=1)`, `reduction="none"`, ...): it fails for more than one element."""

from __future__ import annotations

import ast

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL035", name="backward-of-non-scalar",
    summary="`loss.backward()` of a per-sample (non-scalar) loss fails; reduce it first.",
    what_it_does="""Finds `x.backward()` called with no `gradient` argument where `x` (or the name
it is read from, on the binding the backward sees) is known to keep a
dimension:
- a reduction over an explicit dimension 1 or higher (`t.sum(dim=1)`,
  `t.mean(2)`, `torch.logsumexp(t, 1)`, `t.norm(dim=1)`, `t.amax(1)`...): its
  input has at least two dimensions, so the result has at least one;
- a torch loss function called with `reduction="none"` (`F.mse_loss(p, y,
  reduction="none")`), which keeps the input's shape;
- an element-wise operation (arithmetic other than `@`, `torch.clamp`,
  `F.relu`, `.exp()`, ...) of such a value, which broadcasting can only enlarge.
A reduction to a scalar on the way (`.mean()`, `.sum()` with no dimension)
ends the evidence.""",
    why_bad="""`backward()` with no argument creates the gradient `1.0` only for a tensor with
one element: for more, it raises "grad can be implicitly created only for
scalar outputs".  A loss with one value per sample works with a batch of one
and fails with any real batch; the intended loss is its mean (or sum).""",
    example="""per_sample = ((model(x) - y) ** 2).sum(dim=1)
per_sample.backward()""",
    use_instead="""per_sample = ((model(x) - y) ** 2).sum(dim=1)
per_sample.mean().backward()""",
    fix_safety="No fix: whether the mean or the sum over the batch is meant is the author's choice.",
    known_problems="""A reduction over dimension 0 or -1 is silent (the input may have one
dimension, and the result be a scalar); so is a loss returned by another
function or a module's `forward`, and indexing that keeps a dimension.""",
)

_REDUCTIONS = frozenset({"sum", "mean", "prod", "logsumexp", "amax", "amin", "std", "var", "nansum",
                         "nanmean", "softmax", "log_softmax", "cumsum", "norm", "count_nonzero"})
# the dimension is the first positional argument of the method (not of `norm`)
_POSITIONAL_DIM = frozenset({"sum", "mean", "prod", "logsumexp", "amax", "amin", "nansum", "nanmean",
                             "softmax", "log_softmax", "cumsum", "std", "var"})
_ELEMENTWISE = frozenset({"exp", "log", "abs", "neg", "sqrt", "pow", "clamp", "clamp_min", "clamp_max",
                          "relu", "sigmoid", "tanh", "square", "float", "double", "mul", "add", "sub",
                          "div", "softplus", "log1p", "expm1", "contiguous", "to", "cuda", "cpu"})
_LOSSES = frozenset({"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                     "binary_cross_entropy_with_logits", "cross_entropy", "nll_loss", "kl_div",
                     "soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
                     "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss"})


def _names(scope) -> dict:
    return scope.__dict__.setdefault("_adl035_names", {})


def _int_at_least_one(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 1


def _reduced_dim(call, positional: int | None):
    for k in call.keywords:
        if k.arg == "dim":
            return k.value
    if positional is not None and len(call.args) > positional:
        return call.args[positional]
    return None


def _evidence(checker, node):
    """The node that shows ``node`` keeps a dimension, or None."""
    scope = checker.scope
    if isinstance(node, ast.Name):
        entry = _names(scope).get(node.id)
        if entry is not None:
            bound, evidence = entry
            binding = scope.binding(node.id, checker.seq + 1)
            if binding is not None and binding[1] is bound:
                return evidence
        return None
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.MatMult):
            return None
        return _evidence(checker, node.left) or _evidence(checker, node.right)
    if isinstance(node, ast.UnaryOp):
        return _evidence(checker, node.operand)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    q = checker.qualname(func) or ""
    if isinstance(func, ast.Attribute) and not q:  # a method of a tensor
        attr = func.attr
        if attr in _REDUCTIONS:
            dim = _reduced_dim(node, 0 if attr in _POSITIONAL_DIM else None)
            return node if _int_at_least_one(dim) else None
        if attr in _ELEMENTWISE:
            return _evidence(checker, func.value)
        return None
    if not q.startswith("torch."):
        return None
    short = q.rsplit(".", 1)[-1]
    if short in _LOSSES and q.startswith("torch.nn.functional."):
        if any(k.arg == "reduction" and isinstance(k.value, ast.Constant) and k.value.value == "none"
               for k in node.keywords):
            return node
        return None
    if short in _REDUCTIONS and node.args:
        dim = _reduced_dim(node, 1 if short in _POSITIONAL_DIM else None)
        return node if _int_at_least_one(dim) else None
    if short in _ELEMENTWISE or short in ("clamp", "where", "maximum", "minimum"):
        for a in node.args:
            found = _evidence(checker, a)
            if found is not None:
                return found
    return None


def _worth(checker) -> bool:
    flag = getattr(checker, "_adl035", None)
    if flag is None:
        flag = checker._adl035 = ".backward(" in checker.source
    return flag


def on_name_assign(checker, name, value) -> None:
    scope = checker.scope
    if scope.function is None:
        return
    worth = getattr(checker, "_adl035", None)
    if not (_worth(checker) if worth is None else worth):
        return
    names = scope.__dict__.get("_adl035_names")
    if not isinstance(value, (ast.Call, ast.BinOp, ast.UnaryOp)):
        if names:
            names.pop(name, None)
        return
    evidence = _evidence(checker, value)
    if evidence is not None:
        _names(scope)[name] = (value, evidence)
    elif names:
        names.pop(name, None)


def on_method_call(checker, call, func) -> None:
    if func.attr != "backward" or call.args or any(k.arg in ("gradient", "grad_tensors") or k.arg is None
                                                   for k in call.keywords):
        return
    scope = checker.scope
    if scope.function is None or scope.grad_off:
        return
    evidence = _evidence(checker, func.value)
    if evidence is not None:
        scope.note("ADL035", (call, evidence))


def check_scope(checker, scope) -> None:
    for call, evidence in scope.noted("ADL035"):
        if id(evidence) in scope.reported:
            continue
        scope.reported.add(id(evidence))
        text = checker.text(evidence)
        if len(text) > 60:
            text = text[:57] + "..."
        receiver = checker.text(call.func.value)
        checker.report(
            "ADL035", evidence,
            f"`{text}` keeps a dimension (one value per sample), and `{receiver}.backward()` on line "
            f"{call.lineno} backpropagates it with no `gradient`: backward() will fail for more than one "
            f"element (grad can be implicitly created only for scalar outputs); reduce it first, "
            f"e.g. `{receiver}.mean().backward()`")
