"""The file-level facts the checker keeps besides the walk's own position, in
named objects the rules read: what the file is like before the walk starts
(``FileFacts``), and what it does with optimizers and gradients as the walk
goes (``TrainingFacts``).  What it says about modules is ``modules.ModuleFacts``;
per function, ``events.Scope``."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from autograd_doctor.lint import names as N
from autograd_doctor.lint.argument_modules import module_parameters
from autograd_doctor.lint.arguments import grad_free_parameters
from autograd_doctor.lint.backward_helpers import backward_functions
from autograd_doctor.lint.callers import (
    grad_off_callees, grad_off_code_calls_own_function, mentions, switches_gradients,
)
from autograd_doctor.lint.clearing import clearing_functions
from autograd_doctor.lint.defaults import grad_off_branches
from autograd_doctor.lint.forward_hooks import forward_hooks

# `import jax` / `from warp_nn.optimizers import Adam`, one pattern per keyword: each then
# starts with a word that the regex engine finds by a fast text search, where one pattern
# anchored at every line start (`^...`, re.M) was tried at every position of the text (1% of
# the linter's time on torch/nn). That the keyword begins its line is checked on each match.
_OTHER_IMPORTS = tuple(re.compile(r"%s[ \t]+(?:%s)\b" % (keyword, "|".join(sorted(N.OTHER_AUTODIFF_PACKAGES))))
                       for keyword in ("import", "from"))


@dataclass(frozen=True)
class FileFacts:
    """Read from the whole file before the walk."""
    # The file runs backward passes: its helper functions may well see graph tensors.
    # (A framework may run it: `accelerator.backward(loss)`, `self.manual_backward(loss)`.)
    trains: bool
    mentions_debug: bool  # the words "debug" or "anomaly" occur (a debug guard is possible)
    grad_off_callees: frozenset  # functions this file only calls without gradients (callers.py)
    grad_off_branches: frozenset  # `if` blocks whose parameter only such calls set (defaults.py)
    # function -> parameters that every call in this file fills with a value cut from its graph
    grad_free_parameters: dict
    # same-file functions and methods that run a backward pass (backward_helpers.py)
    backward_functions: frozenset = frozenset()
    # (class or None, function) -> parameters every call fills with one module (argument_modules.py)
    module_parameters: dict = field(default_factory=dict)
    # (class or None, function) registered as a forward hook: its `output` carries a graph
    forward_hooks: frozenset = frozenset()
    # The file imports another framework's autodiff (`import warp as wp`) and nothing of
    # torch: its backward passes, steps and gradients are that framework's.
    other_autodiff: bool = False

    @classmethod
    def read(cls, tree: ast.Module, source: str) -> FileFacts:
        walk = mentions(tree) if switches_gradients(source) and grad_off_code_calls_own_function(tree) else None
        callees = grad_off_callees(walk)
        lowered = source.lower()
        trains = ".backward(" in source or "autograd.grad(" in source or "manual_backward(" in source
        return cls(
            trains=trains,
            mentions_debug="debug" in lowered or "anomaly" in lowered,
            grad_off_callees=callees,
            grad_off_branches=grad_off_branches(walk, callees),
            grad_free_parameters=grad_free_parameters(tree, source),
            backward_functions=backward_functions(tree, source),
            module_parameters=module_parameters(tree, source, trains),
            forward_hooks=forward_hooks(tree, source),
            other_autodiff=_other_autodiff_only(tree, source))


def _other_autodiff_only(tree: ast.Module, source: str) -> bool:
    """Whether the file imports a package of another autodiff framework
    (``names.OTHER_AUTODIFF_PACKAGES``) and no ``torch`` module.  skrl's Warp agents
    (`import warp as wp`, `from warp_nn.optimizers import Adam`) run `tape.backward(loss)`,
    `optimizer.step()` and `tape.zero()` in a loop: nothing there is torch's."""
    if not _imports_other_package(source):  # the common case, without a walk
        return False
    packages = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            packages.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            packages.add(node.module.split(".")[0])
    return "torch" not in packages and bool(packages & N.OTHER_AUTODIFF_PACKAGES)


def _imports_other_package(source: str) -> bool:
    """A line of ``source`` that starts, after spaces and tabs, with `import X` or `from X` for
    a package X of ``names.OTHER_AUTODIFF_PACKAGES`` (a line ends at a newline only)."""
    for pattern in _OTHER_IMPORTS:
        for match in pattern.finditer(source):
            line_start = source.rfind("\n", 0, match.start()) + 1
            if not source[line_start:match.start()].strip(" \t"):
                return True
    return False


@dataclass
class TrainingFacts:
    """Optimizers, the modules whose parameters they step, and gradient clearing."""
    # same-file functions and methods that clear gradients (clearing.py, and any
    # function the walk finds calling zero_grad())
    zero_grad_functions: set = field(default_factory=set)
    grad_free_functions: set = field(default_factory=set)  # same-file functions whose results have no graph
    param_owners: list = field(default_factory=list)   # `X.parameters()` receivers seen in this statement
    param_lists: dict = field(default_factory=dict)    # name -> modules whose parameters it holds
    # `self.model_modules = nn.ModuleList([self.encoder, self.decoder])`: container -> its layers
    container_members: dict = field(default_factory=dict)
    optimizers: dict = field(default_factory=dict)     # optimizer text -> modules whose parameters it steps
    # `models = [model1, model2]`: a list display of names -> their texts, in order (ADL003
    # pairs `optimizers = [opt1, opt2]` with it when each `optK` steps the `K`-th module)
    displays: dict = field(default_factory=dict)
    defines_optimizer: bool = False  # an Optimizer subclass: its step() runs under no_grad
    # same-file `torch.optim.Optimizer` subclass -> its methods other than `step` that write
    # the parameters in place (SAM's `first_step`: `for p in group["params"]: p.add_(e_w)`)
    optimizer_methods: dict = field(default_factory=dict)
    optimizer_instances: dict = field(default_factory=dict)  # optimizer text -> its same-file class
    # same-file classes that are not torch optimizers but update tensors from gradients
    # (a hand-written `SGD.apply(gradients, weights)`, `MomentumSGD.update()`): method
    # name -> (classes defining it, whether its own body reads `.grad`)
    update_methods: dict = field(default_factory=dict)

    @classmethod
    def read(cls, tree: ast.Module, source: str) -> TrainingFacts:
        return cls(zero_grad_functions=set(clearing_functions(tree, source)),
                   optimizer_methods=parameter_writing_methods(tree),
                   update_methods=tensor_updating_methods(tree))


# in-place tensor methods that write their receiver (a parameter's version goes up)
_PARAMETER_WRITES = frozenset("""
add_ sub_ mul_ div_ copy_ addcdiv_ addcmul_ lerp_ clamp_ fill_ zero_ normal_ uniform_ neg_
""".split())


def _optimizer_base(base) -> bool:
    """`torch.optim.Optimizer`, `optim.Optimizer`, or `Optimizer` imported by name."""
    if isinstance(base, ast.Attribute):
        return base.attr == "Optimizer" and isinstance(base.value, (ast.Name, ast.Attribute)) and \
            (getattr(base.value, "id", None) == "optim" or getattr(base.value, "attr", None) == "optim")
    return isinstance(base, ast.Name) and base.id == "Optimizer"


# `p.grad = None`, `p.grad.zero_()`, `p.grad.data.zero_()`, `p.grad.detach_()`, `zero_grad()`
_CLEARS_A_GRADIENT = re.compile(r"\.grad\s*=(?!=)|\.grad(?:\.data)?\.(?:zero_|detach_|fill_)\(|zero_grad\(")


def tensor_updating_methods(tree: ast.Module) -> dict:
    """Each public method of a same-file class that is not a torch `Optimizer` and
    that, in a `for` loop, writes a loop variable in place from a value the loop
    also yields or from `.grad` (`for g, w in zip(gradients, weights): w.sub_(lr *
    g)`, `w -= lr * g`, `p.data.add_(v, alpha=-lr)`, `p.sub_(lr * p.grad)`): the
    update of a project optimizer written by hand.  -> method name -> (the classes
    defining it, whether one of those methods reads `.grad` itself).  Whether the
    tensors written are parameters and the values gradients is the call's to show."""
    out = {}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or any(_optimizer_base(b) for b in cls.bases):
            continue
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef) or method.name.startswith("_") or \
                    not any(_loop_updates_its_variable(loop) for loop in ast.walk(method)):
                continue
            if _CLEARS_A_GRADIENT.search(ast.unparse(method)):
                continue  # it clears what it applied (`p.grad.zero_()` after the write): nothing piles up
            classes, reads_grad = out.get(method.name, ((), False))
            reads_grad = reads_grad or any(isinstance(n, ast.Attribute) and n.attr == "grad"
                                           for n in ast.walk(method))
            out[method.name] = (classes + (cls.name,), reads_grad)
    return out


def _loop_updates_its_variable(loop) -> bool:
    """``loop`` is a `for` loop whose body writes one of its variables in place (or
    its `.data`), by an in-place method or an augmented assignment, from an
    expression that reads another of its variables or a `.grad`."""
    if not isinstance(loop, ast.For):
        return False
    variables = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}

    def written(target):
        if isinstance(target, ast.Attribute) and target.attr == "data":
            target = target.value
        return target.id if isinstance(target, ast.Name) and target.id in variables else None

    def reads_update(values, name):
        return any(isinstance(n, ast.Name) and n.id in variables - {name} or
                   isinstance(n, ast.Attribute) and n.attr == "grad"
                   for v in values for n in ast.walk(v))

    for node in (n for stmt in loop.body for n in ast.walk(stmt)):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
            name = written(node.target)
            if name is not None and reads_update([node.value], name):
                return True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("add_", "sub_", "addcdiv_", "addcmul_"):
            name = written(node.func.value)
            if name is not None and reads_update(node.args + [k.value for k in node.keywords], name):
                return True
    return False


def parameter_writing_methods(tree: ast.Module) -> dict:
    """Each same-file subclass of torch's `Optimizer` -> its public methods other than
    `step` that write a parameter in place: a loop over a parameter group's
    `["params"]` whose body calls an in-place method on the loop variable itself
    (`p.add_(e_w)`).  A write through `.data` (`p.data.add_`) bumps no version and is
    not counted; nor is a method that only calls other methods."""
    out = {}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not any(_optimizer_base(b) for b in cls.bases):
            continue
        writing = set()
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef) or method.name == "step" or method.name.startswith("_"):
                continue
            for loop in ast.walk(method):
                if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
                        and isinstance(loop.iter, ast.Subscript)
                        and isinstance(loop.iter.slice, ast.Constant) and loop.iter.slice.value == "params"):
                    continue
                var = loop.target.id
                if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                       and n.func.attr in _PARAMETER_WRITES and isinstance(n.func.value, ast.Name)
                       and n.func.value.id == var for stmt in loop.body for n in ast.walk(stmt)):
                    writing.add(method.name)
        out[cls.name] = writing
    return out
