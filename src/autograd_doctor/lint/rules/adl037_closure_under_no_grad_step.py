"""ADL037: an optimizer's `step` decorated with `no_grad()` runs its closure with gradients off."""

from __future__ import annotations

import ast

from autograd_doctor.lint.names import turns_grad_off
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
code="ADL037", name="closure-under-no-grad-step",
summary="An optimizer `step` decorated with `no_grad()` calls its closure with gradients off: the closure's backward fails.",
what_it_does="""Finds, in a class whose base is a `torch.optim` optimizer
(`torch.optim.Optimizer`, `from torch.optim import Optimizer`, `optim.Adam`,
...), a method `step` decorated with `@torch.no_grad()` (or
`@torch.inference_mode()`) that calls its closure parameter (`closure()`,
the parameter after `self`, named `closure`) outside a `with
torch.enable_grad():` block.  Silent when the method mentions `enable_grad` or
`set_grad_enabled` anywhere, re-binds the closure parameter, or calls it inside
a nested function or lambda.""",
why_bad="""`optimizer.step(closure)` is documented to call a closure that
"reevaluates the model and returns the loss": it runs the forward and
`loss.backward()` (PyTorch Lightning's automatic optimisation always passes
one, as does L-BFGS-style code).  The decorator turns gradients off for the
whole method, so the forward inside the closure records no graph and its
`backward()` fails with "element 0 of tensors does not require grad and does
not have a grad_fn".  PyTorch's own optimizers call the closure inside `with
torch.enable_grad():` for this reason (transformers' `AdamW` / `Adafactor`
4.30 did not: huggingface/transformers#24412).""",
example="""class Lion(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        ...""",
use_instead="""class Lion(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        ...""",
fix_safety="No automatic fix.",
known_problems="""Only a base named through `torch.optim` (or a class of the same file
whose base is) is taken for an optimizer; a closure that turns gradients on
itself is not looked at (the decorated call is still reported: the step's
contract lets any closure be passed).""",
)

_OPTIM = "torch.optim"
_ENABLE = ("enable_grad", "set_grad_enabled")


def check_file(checker) -> None:
    source = checker.source
    if "closure" not in source or ("no_grad" not in source and "inference_mode" not in source):
        return  # the cheap gate: nothing to do in nearly every file
    classes = {node.name: node for node in checker.class_nodes}  # collected by the walk
    for cls in classes.values():
        if not _is_optimizer(checker, cls, classes):
            continue
        for func in cls.body:
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and func.name == "step":
                _check_step(checker, cls, func)


def _is_optimizer(checker, cls, classes, depth=0) -> bool:
    for base in cls.bases:
        q = checker.qualname(base)
        if q and (q == _OPTIM or q.startswith(_OPTIM + ".")):
            return True
        if isinstance(base, ast.Name) and base.id in classes and base.id != cls.name and depth < 3 \
                and base.id not in checker.aliases:
            if _is_optimizer(checker, classes[base.id], classes, depth + 1):
                return True
    return False


def _grad_off_decorator(checker, func):
    for d in func.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if turns_grad_off(checker.qualname(target), d):  # not inference_mode(False)
            return d
    return None


def _check_step(checker, cls, func) -> None:
    args = func.args.posonlyargs + func.args.args
    names = [a.arg for a in args[1:]] + [a.arg for a in func.args.kwonlyargs]
    decorator = _grad_off_decorator(checker, func) if "closure" in names else None
    if decorator is None:
        return
    body_text = "\n".join(checker.text(stmt) for stmt in func.body)
    if any(word in body_text for word in _ENABLE):
        return
    calls = []
    for node in ast.walk(ast.Module(body=func.body, type_ignores=[])):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return  # a nested callable may call the closure elsewhere: no evidence of when
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id == "closure" for t in targets for n in ast.walk(t)):
                return  # re-bound (wrapped in enable_grad elsewhere, say)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "closure":
            calls.append(node)
    for call in calls:
        checker.report("ADL037", call, (
            f"`{cls.name}.step` is decorated with `@{checker.text(decorator).strip()}`, so `closure()` runs the forward and "
            f"`backward()` it is passed with gradients off: the closure's loss has no graph and its "
            f"backward fails (\"element 0 of tensors does not require grad\"); call it inside "
            f"`with torch.enable_grad():`, as torch.optim's optimizers do"))
