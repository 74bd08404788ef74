"""ADL021: an out-of-place tensor operation used as a statement: its result is
thrown away, so the line changes nothing (`torch.clamp(self.w, 1e-6)`,
`scores.masked_fill(~mask, 0)`)."""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.submodules import file_text, repository_files, repository_root

RULE = Rule(
    code="ADL021", name="out-of-place-result-discarded",
    summary="An out-of-place tensor operation whose result is thrown away: the line changes nothing.",
    what_it_does="""Finds a call used as a whole statement, its value unused, of a
tensor operation that returns a new tensor and leaves its input as it was:
* a `torch.` function that computes new values (`torch.clamp(self.w, 1e-6)`,
  `torch.sigmoid(x)`, `torch.masked_fill(...)`), without `out=`;
* a tensor method that only tensors have (`x.masked_fill(mask, 0)`,
  `x.clamp(min=0)`, `x.index_fill(...)`, `x.scatter_add(...)`), on a receiver
  that is a tensor or may be one: not on `self` (an instance of the user's
  class), not with no argument at all (torch rejects `x.clamp()`: no such call
  is the tensor operation), and not where a class of the project (the linted
  file or its repository) defines a method of that name (lava-dl's
  `self.delay.clamp()`, a module that clamps its own parameters in place),
  unless the receiver is known to be a tensor;
* a method that other libraries' objects have too (`x.add(1)`, `x.mul(2)`,
  `x.abs()`, `x.sigmoid()`...), only on a receiver known to be a tensor;
* `x.detach()` on a name known to carry a graph (computed, with gradients
  on, from a module with parameters or a leaf that requires grad): the name
  keeps its graph, so gradients still flow where the line meant to stop them
  (a DQN's `next_q.detach()` before the TD target).
Also a grad-mode context manager called as a statement: `torch.no_grad()`,
`torch.enable_grad()`, `torch.inference_mode()` (also through
`torch.autograd`, or imported by name) only build the context manager, and
nothing enters it: the lines below run in the grad mode they had (min-dalle's
generator, whose decoder then builds a graph on every step).
`torch.set_grad_enabled(False)` and `torch.autograd.set_detect_anomaly(True)`
act when called and are not reported.
Also a forward hook of the file (a function or method passed to
`register_forward_hook`) that rebinds its `output` parameter to a new value,
never reads it again and returns nothing: a forward hook changes the module's
output only by returning the new value (ManifoldMixup's `hook_modify`).
Also `net.load_state_dict(net.state_dict())`: a module given its own state
back (a target network "refreshed" from itself instead of from the trained
network keeps its initial weights), where the same file shows `net` is a
copy of another module (loaded elsewhere from another module's
`state_dict()`, or built by `copy.deepcopy`); a round trip of a module's own
state with no such evidence is how tests exercise loading (its hooks, its
warnings) and is not reported.
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
method (`obj.clamp(...)` that clamps in place) is reported when no class of the
repository defines it (a class of an installed library).  Where a class of the
project defines a method of the name, a tensor's own call of it is reported only
on a receiver known to be a tensor (a name bound to a tensor op's result).""",
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

# Grad-mode context managers whose construction changes nothing: the mode changes only when
# the object is entered (`with`) or used as a decorator (torch 2.13: `no_grad.__init__` and
# `enable_grad.__init__` only record the current mode, `inference_mode.__init__` only stores
# the flag).  `torch.set_grad_enabled(False)` and `torch.autograd.set_detect_anomaly(True)`
# change the mode in their constructor and are not listed.
GRAD_MODE_CONTEXTS = frozenset(f"{module}.{name}" for module in (
    "torch", "torch.autograd", "torch.autograd.grad_mode") for name in ("no_grad", "enable_grad", "inference_mode"))

# Those with an in-place twin (`clamp_`): `torch.Tensor` has `<name>_` for each (torch 2.13).
HAS_INPLACE_FORM = frozenset("""
abs add addcdiv addcmul clamp clamp_max clamp_min clip cos cumsum div exp index_add index_copy index_fill lerp log
masked_fill masked_scatter mul neg pow reciprocal relu rsqrt scatter scatter_add sigmoid sign sin sqrt square sub
tanh tril triu
""".split())


def on_call(checker, node, q) -> None:
    """`torch.clamp(self.w, 1e-6)` as a statement; `torch.no_grad()` as a statement."""
    # The set look-up first: the walk calls this hook for every call of the file.
    if q in GRAD_MODE_CONTEXTS and checker.statement_is(node) and not checker.error_expected:
        checker.scope.note("ADL021", (node, f"`{checker.text(node.func)}()`", "grad mode", None))
        return
    if not (q.startswith("torch.") and q[6:] in PURE_FUNCTIONS and q.count(".") == 1 and node.args
            and checker.statement_is(node)) or _writes_out(node) or checker.error_expected:
        return
    checker.scope.note("ADL021", (node, f"`{q}(...)`", q[6:], node.args[0]))


# Every method name this rule looks at: one set look-up per method call of the file.
_WATCHED_METHODS = TENSOR_ONLY_METHODS | SHARED_METHODS | {"detach", "register_forward_hook", "load_state_dict"}


def on_method_call(checker, node, func) -> None:
    """`x.masked_fill(mask, 0)` as a statement."""
    attr = func.attr
    if attr not in _WATCHED_METHODS:
        return
    if attr == "register_forward_hook":
        if node.args:  # the hook, read by check_file
            checker.notes.setdefault("ADL021 forward hooks", []).append(node.args[0])
        return
    if not checker.statement_is(node) or _writes_out(node) or checker.error_expected:
        return
    if attr == "load_state_dict":
        # Reported by check_file, once the whole file is read: only where the file shows the
        # receiver is meant to be a copy of another module (see _copies).
        if _loads_own_state(checker, node, func):
            checker.notes["ADL021 self loads"].append((node, func.value))
        return
    if attr == "detach":
        # Thrown away, `detach()` is harmless dead code unless the name keeps a graph that
        # the line meant to cut: only then is it reported.
        if isinstance(func.value, ast.Name) and not node.args and checker.is_graph(func.value):
            checker.scope.note("ADL021", (node, "`.detach()`", attr, func.value))
        return
    if checker.is_tensor(func.value) or attr in TENSOR_ONLY_METHODS and not _not_a_tensor(checker, node, func):
        checker.scope.note("ADL021", (node, f"`.{attr}({'...' if node.args or node.keywords else ''})`", attr,
                                      func.value))


def _not_a_tensor(checker, call, func) -> bool:
    """Evidence that `recv.<tensor-only method>(...)`, on a receiver not known to be a
    tensor, is not the tensor operation: no argument at all (every tensor-only method
    needs one: `x.clamp()` raises "At least one of 'min' or 'max' must not be None"),
    the receiver `self` / `cls` of a class that does not subclass a tensor, or a class
    of the project that defines a method of that name (lava-dl's `def clamp(self)` in
    its neuron and delay modules, called as `self.clamp()` and `self.delay.clamp()`)."""
    if not call.args and not call.keywords:
        return True
    recv = func.value
    if isinstance(recv, ast.Name) and recv.id in ("self", "cls") and checker.scope.owner_class and \
            not any(b in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter")
                    for b in checker.scope.class_bases):
        return True
    return _project_defines_method(checker, func.attr)


def _project_defines_method(checker, name: str) -> bool:
    """A class of the linted file, or of another file of its repository, defines `name`."""
    for node in ast.walk(checker.tree):
        if isinstance(node, ast.ClassDef) and any(
                isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) and b.name == name for b in node.body):
            return True
    filename = checker.filename
    if not filename or filename.startswith("<"):
        return False
    return _repository_defines_method(repository_root(os.path.dirname(os.path.abspath(filename))),
                                      os.path.abspath(filename), name)


@lru_cache(maxsize=256)
def _repository_defines_method(root: str, filename: str, name: str) -> bool:
    """An indented `def name(self...` (a method) in a Python file of the repository."""
    method = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+%s[ \t]*\([ \t]*(?:self|cls)\b" % re.escape(name), re.M)
    return any(method.search(file_text(path)) for path in repository_files(filename))


def check_scope(checker, scope) -> None:
    for node, shown, op, operand in scope.noted("ADL021"):
        if op == "grad mode":
            checker.report(
                "ADL021", node,
                f"{shown} makes a context manager and the result is thrown away: nothing enters it, so "
                f"the grad mode of the lines below is unchanged; enter it around them (`with {shown[1:-1]}:`) "
                f"or decorate the function with it")
            continue
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


def check_file(checker) -> None:
    """Self-loads of a module meant to copy another; forward hooks that compute a new
    output and throw it away (read from the tree only in a file whose walk saw a
    `register_forward_hook(...)` call)."""
    _check_self_loads(checker)
    hooks = set()
    for hook in checker.notes.get("ADL021 forward hooks") or ():
        if isinstance(hook, ast.Name):
            hooks.add(hook.id)
        elif isinstance(hook, ast.Attribute) and isinstance(hook.value, ast.Name) and hook.value.id == "self":
            hooks.add(hook.attr)
    if not hooks:
        return
    for function in ast.walk(checker.tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.name in hooks:
            _check_hook(checker, function)


def _check_hook(checker, function) -> None:
    """`def hook(module, input, output): output = f(output)` (a method: `self` first),
    with no `return` of a value and no read of the new `output`."""
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    if len(names) != 3 or function.decorator_list:
        return
    output = names[2]
    own = [n for n in ast.walk(function) if not isinstance(n, (ast.Lambda,)) and n is not function]
    if any(isinstance(n, ast.Return) and n.value is not None for n in own) or \
            any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in own):
        return
    rebinds = [n for n in function.body if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and n.targets[0].id == output]
    if not rebinds:
        return
    last = rebinds[-1]
    reads_after = any(isinstance(n, ast.Name) and n.id == output and isinstance(n.ctx, ast.Load)
                      and (n.lineno, n.col_offset) > (last.end_lineno, last.end_col_offset) for n in own)
    if reads_after:
        return
    checker.report(
        "ADL021", last,
        f"forward hook `{function.name}` rebinds `{output}` to a new value and returns nothing: a forward "
        f"hook changes the module's output only by returning it, so this line changes nothing "
        f"(end the hook with `return {output}`)")


def _check_self_loads(checker) -> None:
    """`net.load_state_dict(net.state_dict())` changes nothing only where loading has no
    effect of its own, and it is a mistake only where `net` should have received another
    module's state.  A round trip of a module's own state is also how tests exercise
    loading (its hooks: torchrec's cache purge; the warnings it gives), so the line is
    reported only where the same file shows `net` is a copy of another module: loaded
    elsewhere from another object's `state_dict()`, or built by `copy.deepcopy(...)`
    (a target network and its online network)."""
    self_loads = checker.notes.get("ADL021 self loads")
    if not self_loads:
        return
    for node, operand in self_loads:
        module = checker.text(operand)
        if module not in _copies(checker, _region(checker.tree, node, operand)):
            continue
        checker.report("ADL021", node,
                       f"`{module}.load_state_dict({module}.state_dict())` loads the module's own state "
                       f"into it: this line changes nothing (a target network refreshed this way keeps "
                       f"its old weights); load the state of the module it should copy")


def _region(tree, node, operand):
    """Where a name means the same object as at `node`: the enclosing function for a
    plain name (`qm` of one test is not `qm` of the next), the enclosing class for an
    attribute of `self`, the file otherwise."""
    root = operand
    while isinstance(root, ast.Attribute):
        root = root.value
    wanted = (ast.FunctionDef, ast.AsyncFunctionDef) if root is operand else \
        (ast.ClassDef,) if isinstance(root, ast.Name) and root.id == "self" else ()
    region = tree
    if wanted:
        for outer in ast.walk(tree):
            if isinstance(outer, wanted) and outer.lineno <= node.lineno <= (outer.end_lineno or 0):
                region = outer  # ast.walk goes outer first: the last match is the innermost
    return region


def _copies(checker, region) -> set:
    """Texts of the receivers `region` makes copies of another module: `a.load_state_dict(
    b.state_dict())` with `b` not `a`, and `a = copy.deepcopy(b)` / `a = deepcopy(b)`."""
    copies = set()
    for node in ast.walk(region):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "load_state_dict" and len(node.args) == 1:
            state = node.args[0]
            if isinstance(state, ast.Call) and isinstance(state.func, ast.Attribute) and \
                    state.func.attr == "state_dict" and \
                    checker.text(state.func.value) != checker.text(node.func.value):
                copies.add(checker.text(node.func.value))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple) and \
                    isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts) else \
                    ((target, node.value),)
                copies.update(checker.text(name) for name, value in pairs if _is_deepcopy(value))
    return copies


def _is_deepcopy(value) -> bool:
    """`copy.deepcopy(x)` / `deepcopy(x)`."""
    if not (isinstance(value, ast.Call) and value.args):
        return False
    callee = value.func
    return (callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)) == "deepcopy"


def _loads_own_state(checker, node, func) -> bool:
    """`net.load_state_dict(net.state_dict())`: the argument is the receiver's own
    `state_dict()` (the same name or attribute chain, read twice in one statement)."""
    if len(node.args) != 1 or not isinstance(func.value, (ast.Name, ast.Attribute)):
        return False
    state = node.args[0]
    return isinstance(state, ast.Call) and isinstance(state.func, ast.Attribute) and \
        state.func.attr == "state_dict" and not state.args and not state.keywords and \
        checker.text(state.func.value) == checker.text(func.value)


def _writes_out(call) -> bool:
    """`out=` writes the result; `inplace=True` is no torch op's keyword (kornia's
    `boxes.clamp(..., inplace=True)` changes its object)."""
    return any(keyword.arg in ("out", "inplace") for keyword in call.keywords)
