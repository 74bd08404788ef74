"""ADL030: an EMA / momentum ("mean teacher") update that averages one model's
parameters into another's and never updates its buffers: the averaged model's
batch-norm running statistics stay at their initial values."""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from autograd_doctor.lint.clearing import module_file_in_project
from autograd_doctor.lint.defaults import off_by_default, parameter_defaults
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.submodules import file_text, repository_files

RULE = Rule(
    code="ADL030", name="ema-skips-buffers", default=False,
    opt_in_reason="a hazard, but its first fresh set gave 0 real of 2: see set Z in docs/lint.md",
    summary="An EMA / momentum update averages a model's parameters into another model and never its buffers: "
            "the averaged model's batch-norm running statistics stay at their initial values.",
    what_it_does="""Finds a loop `for a, b in zip(M.parameters(), N.parameters()):` (or
`named_parameters()`, or attributes of `self` holding such lists) whose body
writes one model's parameter in place from the other's: `a.mul_(d).add_(b)`,
`a.lerp_(b, w)`, `a.copy_(...)`, `a.data = ...`, also through `.data`.
It reports the loop when all of these hold:
- the project builds batch-norm layers (`BatchNorm1d/2d/3d`, `SyncBatchNorm`,
  called in code: not in a comment or a string) in the linted file, or in a project file that it or a file naming its
  module imports (three import levels deep);
- the class (or, for a function outside a class, the file) never reads the
  buffers: no `buffers()`, `named_buffers()`, `state_dict()`,
  `load_state_dict()`, `running_mean` / `running_var`, except inside an
  `if` that is false at a parameter's default (`if self.with_buffers:` with
  `with_buffers=False`), which the default configuration skips;
- the averaged model is not run by the same class or function (a MoCo / BYOL
  key encoder forwarded in train mode refreshes its own statistics);
- the averaged model is put in eval mode somewhere in the repository, where it
  would normalise with its stale running statistics: `.eval()` (or
  `.train(False)`) on it, on a name it is bound to or passed as (the attribute
  name's last part: `a.target_policy` and `self.target_policy`), on the
  object that holds it (`self.eval()` for `self.ema`), or in the statement that
  builds it (`self.ema = copy.deepcopy(model).eval()`).  A target network that
  is only ever forwarded in train mode (MADDPG's `prep_training` puts its
  targets in `.train()`) refreshes its own statistics and is not reported.""",
    why_bad="""Batch-norm running statistics are buffers, not parameters.  An EMA (mean
teacher, Polyak average) that averages only `parameters()` leaves the EMA
model's `running_mean` / `running_var` where they were when it was copied;
in eval mode it normalises with statistics that do not match its weights,
"increasingly misaligned with every step" (CoSMix, SSDA-YOLO, SESEMI,
ema-pytorch).  Nothing raises; the teacher's pseudo-labels and the EMA model's
evaluation are silently wrong.""",
    example="""model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
ema = copy.deepcopy(model).eval()
for e, p in zip(ema.parameters(), model.parameters()):
    e.mul_(0.999).add_(p, alpha=0.001)""",
    use_instead="""model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
ema = copy.deepcopy(model).eval()
for e, p in zip(ema.parameters(), model.parameters()):
    e.mul_(0.999).add_(p, alpha=0.001)
for eb, b in zip(ema.buffers(), model.buffers()):
    eb.copy_(b)""",
    fix_safety="No automatic fix: whether to copy or to average the buffers is the user's choice.",
    known_problems="""Whether the averaged model itself has batch norm is not resolved: the evidence
is that the project builds batch-norm layers, so an EMA of a model without them
in such a project is reported (an EMA helper applied to a batch-norm-free
generator, for instance).  Buffers synchronised by a caller in another file
(`ema.load_state_dict(...)` after the update) are not seen.  Eval mode is
matched by name (the last part of an attribute chain), not resolved: a
`.eval()` of another object of the same name counts, and a model put in eval
mode under another name (an `evaluate(model)` helper's parameter) does not, so
such an EMA is silent.  Opt-in since set Z (0 of 2 real on its first fresh
set).""",
)

_WRITES = frozenset({"mul_", "add_", "sub_", "copy_", "lerp_", "addcmul_", "set_", "div_"})
_BUFFER_WORDS = frozenset({"buffers", "named_buffers", "state_dict", "load_state_dict", "_buffers",
                           "running_mean", "running_var", "register_buffer"})
_PARAMETER_CALLS = frozenset({"parameters", "named_parameters"})
_NORM = re.compile(r"\b(?:Sync)?BatchNorm(?:1d|2d|3d)?\s*\(")
_NORM_NAME = re.compile(r"(?:Sync)?BatchNorm(?:1d|2d|3d)?")


def check_file(checker) -> None:
    source = checker.source
    if "zip" not in source or "parameters" not in source:
        return
    candidates = []
    for scope in _scopes(checker.tree):
        candidates += [(scope, loop) for loop in _averaging_loops(scope)]
    if not candidates or not _project_builds_batch_norm(checker):
        return
    for scope, (loop, target) in candidates:
        if _reads_buffers(scope) or _forwards(checker, scope, loop, target) \
                or not _update_is_used(checker, scope, loop, target) \
                or not _put_in_eval_mode(checker, scope, loop, target):
            continue
        _report(checker, loop, target)


def _scopes(tree):
    """Each class, and each function outside a class (what reads the buffers is looked for there)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _averaging_loops(scope):
    """(loop, the text of the written model's parameters) for each `for ... in zip(P, Q)` that writes in place."""
    init_lists = _self_parameter_lists(scope) if isinstance(scope, ast.ClassDef) else set()
    for loop in ast.walk(scope):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call)
                and isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "zip"
                and len(loop.iter.args) == 2 and not loop.iter.keywords):
            continue
        sources = [_parameter_source(arg, init_lists) for arg in loop.iter.args]
        if None in sources or sources[0] == sources[1]:
            continue
        targets = _element_names(loop.target)
        if len(targets) != 2 or None in targets:
            continue
        for written, other in ((0, 1), (1, 0)):
            if _writes_from(loop.body, targets[written], targets[other]):
                yield loop, sources[written]
                break


def _parameter_source(arg, init_lists: set) -> str | None:
    """`M` for `M.parameters()` / `M.named_parameters()` (maybe in `list(...)`), or `self.attr`."""
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "list" and len(arg.args) == 1:
        arg = arg.args[0]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in _PARAMETER_CALLS \
            and not arg.args:
        return ast.unparse(arg.func.value)
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self" \
            and arg.attr in init_lists:
        return "self." + arg.attr
    return None


def _self_parameter_lists(cls: ast.ClassDef) -> set:
    """Attributes of `self` that `__init__` sets to `list(arg)` of an argument whose name says parameters."""
    out = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], ast.Attribute) \
                        and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "self":
                    value = stmt.value
                    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" \
                            and len(value.args) == 1:
                        value = value.args[0]
                    if isinstance(value, ast.Name) and "param" in value.id.lower():
                        out.add(stmt.targets[0].attr)
                    elif _parameter_source(value, set()) is not None:
                        out.add(stmt.targets[0].attr)
    return out


def _element_names(target) -> list:
    """The two per-model names a zip loop binds (`a, b` or `(_, a), (_, b)`)."""
    if not isinstance(target, ast.Tuple) or len(target.elts) != 2:
        return []
    out = []
    for elt in target.elts:
        if isinstance(elt, ast.Name):
            out.append(elt.id)
        elif isinstance(elt, ast.Tuple) and len(elt.elts) == 2 and isinstance(elt.elts[1], ast.Name):
            out.append(elt.elts[1].id)
        else:
            out.append(None)
    return out


def _base_name(node) -> str | None:
    """`t` for `t`, `t.data`."""
    if isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _chain_root(node):
    """The receiver at the start of a method chain `t.data.mul_(d).add_(s)` -> `t.data`."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _WRITES:
        node = node.func.value
    return node


def _mentions(node, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _writes_from(body, written: str, other: str) -> bool:
    """The body averages `other` into `written` in place (or into its `.data`): a write of
    `written` that reads `other`, and `written` is also scaled or read (`lerp_`, `mul_`,
    `w * m + o * (1 - m)`), so that a one-time copy (`w.data[:] = o.data[:]`) is not one."""
    blends, scaled = False, False
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _WRITES \
                    and _base_name(_chain_root(node)) == written:
                chain = _chain_methods(node)
                if chain & {"mul_", "div_", "lerp_"}:
                    scaled = True
                if _mentions_in_arguments(node, other):
                    blends = True
                    if "lerp_" in chain or _mentions_in_arguments(node, written):
                        scaled = True
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Attribute) and target.attr == "data" and _base_name(target) == written \
                        and _mentions(node.value, other):
                    blends = True
                    scaled = scaled or _mentions(node.value, written)
            elif isinstance(node, ast.AugAssign) and _base_name(node.target) == written:
                if _mentions(node.value, other):
                    blends = True
                if isinstance(node.op, (ast.Mult, ast.Div)):
                    scaled = True
    return blends and scaled


def _chain_methods(node) -> set:
    out = set()
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _WRITES:
        out.add(node.func.attr)
        node = node.func.value
    return out


def _mentions_in_arguments(node, name: str) -> bool:
    """`name` read by the arguments of any call of the chain (not as its receiver)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _WRITES:
        if any(_mentions(a, name) for a in node.args) or any(_mentions(k.value, name) for k in node.keywords):
            return True
        node = node.func.value
    return False


def _reads_buffers(scope) -> bool:
    """The scope names the buffers outside an `if` that is off at a parameter's default."""
    defaults, flags = _defaults_of(scope)
    skipped = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.If) and off_by_default(_as_name(node.test, flags), defaults):
            skipped.update(id(n) for n in ast.walk(node) if n is not node.test)
            skipped.update(id(n) for stmt in node.orelse for n in ast.walk(stmt))  # else runs: keep it
            for stmt in node.orelse:
                for n in ast.walk(stmt):
                    skipped.discard(id(n))
    for node in ast.walk(scope):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Attribute) and node.attr in _BUFFER_WORDS:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _BUFFER_WORDS:
            return True  # getattr(model, "buffers")
    return False


def _defaults_of(scope):
    """Parameter defaults of the scope (its `__init__` for a class) and the `self.X = X` flags."""
    if isinstance(scope, ast.ClassDef):
        init = next((n for n in scope.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:
            return {}, {}
        flags = {}
        for stmt in ast.walk(init):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name) \
                    and isinstance(stmt.targets[0], ast.Attribute) \
                    and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "self":
                flags[stmt.targets[0].attr] = stmt.value.id
        return parameter_defaults(init), flags
    return parameter_defaults(scope), {}


def _as_name(test, flags: dict):
    """`self.X` read as the `__init__` parameter it was set from."""
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "self" \
            and test.attr in flags:
        return ast.Name(id=flags[test.attr], ctx=ast.Load())
    return test


def _forwards(checker, scope, loop, target: str) -> bool:
    """The averaged model (a name the file binds to it or from it, `teacher_without_ddp =
    teacher.module`, or what the file's callers pass for it when it is a parameter) is called
    in the file and never put in eval mode there: it runs its own forward passes in train
    mode, which refresh its statistics (MoCo, BYOL, DINO, Mean Teacher's `ema_model`)."""
    names = _aliases(checker.tree, target) | _caller_arguments(checker.tree, scope, loop, target)
    names = set().union(*(_aliases(checker.tree, n) for n in names))
    if not any(isinstance(n, ast.Call) and ast.unparse(n.func) in names for n in ast.walk(checker.tree)):
        return False
    return not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "eval"
                   and ast.unparse(n.func.value) in names for n in ast.walk(checker.tree))


def _update_is_used(checker, scope, loop, target: str) -> bool:
    """The function holding the loop is called (its name is mentioned in the file past
    its own `def`, or in another file of the repository), and when the averaged model is
    its parameter, what the file's callers pass for it is read somewhere else (an EMA
    model that nothing forwards, evaluates, saves or returns keeps no wrong statistics
    that anyone sees)."""
    func = _function_of(scope, loop)
    if func is None or func.name.startswith("__"):
        return True  # `__call__`: called through its instance
    word = re.compile(r"(?<!def )\b%s\b" % re.escape(func.name))
    mentions = [n for n in ast.walk(checker.tree)
                if (isinstance(n, ast.Name) and n.id == func.name)
                or (isinstance(n, ast.Attribute) and n.attr == func.name)]
    if not mentions:
        own = os.path.abspath(checker.filename) if checker.filename else None
        stem = re.compile(r"\b%s\b" % re.escape(os.path.splitext(os.path.basename(own or ""))[0] or "<none>"))
        if not any(word.search(text) and stem.search(text) for text in
                   (file_text(path) for path in repository_files(checker.filename) if os.path.abspath(path) != own)):
            return False  # never called: dead code
        return True
    passed = _caller_arguments(checker.tree, scope, loop, target)
    if not passed:
        return True
    calls = [n for n in ast.walk(checker.tree) if isinstance(n, ast.Call) and any(m is n.func for m in mentions)]
    in_calls = {id(a) for c in calls for a in ast.walk(c)} | {id(a) for a in ast.walk(func)}
    for node in ast.walk(checker.tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
                and id(node) not in in_calls and ast.unparse(node) in passed:
            return True
    return False


def _put_in_eval_mode(checker, scope, loop, target: str) -> bool:
    """Evidence that the averaged model runs in eval mode, where batch norm normalises
    with the running statistics the update leaves stale: `.eval()` / `.train(False)`
    on a name it goes by (its text, its aliases in the file, what the repository's
    calls of the updating function pass for it; matched by the last part of an
    attribute chain), on the object holding it (`self.eval()` for `self.ema`), or in
    the statement that builds it (`ema = copy.deepcopy(model).eval()`)."""
    names = _aliases(checker.tree, target) | _caller_arguments(checker.tree, scope, loop, target) \
        | _repository_caller_arguments(checker, scope, loop, target) | _instance_call_arguments(checker.tree, scope,
                                                                                                  loop, target)
    names = set().union(*(_aliases(checker.tree, n) for n in names))
    lasts = {n.rsplit(".", 1)[-1] for n in names}
    holders = {n.rsplit(".", 1)[0] for n in names if "." in n}
    for node in ast.walk(checker.tree):
        if _eval_call(node):
            receiver = ast.unparse(node.func.value)
            if receiver in names or receiver in holders or receiver.rsplit(".", 1)[-1] in lasts:
                return True
        elif isinstance(node, ast.Assign) and any(ast.unparse(t) in names for t in node.targets) \
                and any(_eval_call(n) for n in ast.walk(node.value)):
            return True
    lasts = {n for n in lasts if n.isidentifier() and n != "self"}
    if not lasts:
        return False
    mode = re.compile(r"\b(?:%s)\s*(?:\.\s*eval\s*\(\s*\)|\.\s*train\s*\(\s*(?:mode\s*=\s*)?False\s*\)"
                      r"|=[^\n]*\.eval\s*\(\s*\))" % "|".join(map(re.escape, sorted(lasts))))
    own = os.path.abspath(checker.filename) if checker.filename and not checker.filename.startswith("<") else None
    return any(mode.search(file_text(path)) for path in repository_files(checker.filename)
               if os.path.abspath(path) != own)


def _instance_call_arguments(tree, scope, loop, target: str) -> set:
    """For a `target` parameter of a class's `__call__`, what the file's calls of its
    instances pass for it (`Averager()(ema, model)`, `avg = Averager(); avg(ema, model)`)."""
    func = _function_of(scope, loop)
    if func is None or func.name != "__call__" or not isinstance(scope, ast.ClassDef):
        return set()
    params = [a.arg for a in func.args.posonlyargs + func.args.args][1:]
    if target not in params:
        return set()
    index = params.index(target)
    instances = {ast.unparse(n.targets[0]) for n in ast.walk(tree) if isinstance(n, ast.Assign)
                 and len(n.targets) == 1 and isinstance(n.value, ast.Call)
                 and isinstance(n.value.func, ast.Name) and n.value.func.id == scope.name}
    out = set()
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and (
                (isinstance(call.func, ast.Call) and isinstance(call.func.func, ast.Name)
                 and call.func.func.id == scope.name) or ast.unparse(call.func) in instances):
            if index < len(call.args):
                out.add(ast.unparse(call.args[index]))
            out.update(ast.unparse(k.value) for k in call.keywords if k.arg == target)
    return out


def _eval_call(node) -> bool:
    """`m.eval()`, `m.train(False)`, `m.train(mode=False)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr == "eval" and not node.args and not node.keywords:
        return True
    values = list(node.args) + [k.value for k in node.keywords if k.arg == "mode"]
    return node.func.attr == "train" and len(values) == 1 and isinstance(values[0], ast.Constant) \
        and values[0].value is False


def _repository_caller_arguments(checker, scope, loop, target: str) -> set:
    """For a `target` that is a parameter of the function holding the loop, what the
    calls of that function in the repository's other files pass for it
    (`soft_update(a.target_policy, a.policy, tau)` in MADDPG's `maddpg.py`)."""
    func = _function_of(scope, loop)
    if func is None or not checker.filename or checker.filename.startswith("<"):
        return set()
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    if target not in params:
        return set()
    own = os.path.abspath(checker.filename)
    word = re.compile(r"\b%s\s*\(" % re.escape(func.name))
    out = set()
    for path in repository_files(checker.filename):
        if os.path.abspath(path) == own:
            continue
        text = file_text(path)
        if not word.search(text):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        out |= _caller_arguments(tree, scope, loop, target)
    return out


def _function_of(scope, loop):
    return next((f for f in ast.walk(scope) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and any(n is loop for n in ast.walk(f))), None)


def _caller_arguments(tree, scope, loop, target: str) -> set:
    """For a `target` that is a parameter of the function holding the loop, the texts
    that the file's calls of that function pass for it."""
    func = _function_of(scope, loop)
    if func is None:
        return set()
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    if target not in params:
        return set()
    index = params.index(target) - (1 if params and params[0] in ("self", "cls") else 0)
    out = set()
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and (
                (isinstance(call.func, ast.Name) and call.func.id == func.name)
                or (isinstance(call.func, ast.Attribute) and call.func.attr == func.name)):
            if 0 <= index < len(call.args):
                out.add(ast.unparse(call.args[index]))
            out.update(ast.unparse(k.value) for k in call.keywords if k.arg == target)
    return out


def _aliases(tree, target: str) -> set:
    names = {target}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            left, right = ast.unparse(node.targets[0]), node.value
            if isinstance(right, ast.Attribute) and right.attr == "module":
                right = right.value
            if isinstance(right, (ast.Name, ast.Attribute)):
                right = ast.unparse(right)
                if left in names:
                    names.add(right)
                elif right in names:
                    names.add(left)
    return names


def _project_builds_batch_norm(checker) -> bool:
    """A batch-norm layer is built in the linted file, or in a project file reached from it
    or from a file that calls into it (one naming the file's module) through the project's
    own imports, three levels deep: not merely somewhere in the repository (a test of
    another feature)."""
    if _builds_norm(checker.source):
        return True
    if not checker.filename or checker.filename.startswith("<"):
        return False
    own = os.path.abspath(checker.filename)
    stem = re.compile(r"\b%s\b" % re.escape(os.path.splitext(os.path.basename(own))[0]))
    start = [own] + [os.path.abspath(p) for p in repository_files(checker.filename)
                     if os.path.abspath(p) != own and stem.search(file_text(p))]
    seen, frontier = set(start), list(start)
    for _ in range(3):
        following = []
        for path in frontier:
            text = checker.source if path == own else file_text(path)
            if path != own and _builds_norm(text):
                return True
            for module in _imported_modules(path, text):
                found = module_file_in_project(module, path)
                if found and os.path.abspath(found) not in seen:
                    seen.add(os.path.abspath(found))
                    following.append(os.path.abspath(found))
        frontier = following
    return any(_builds_norm(file_text(p)) for p in frontier)


def _builds_norm(text: str) -> bool:
    """The text calls a batch-norm constructor in its code: not in a comment
    (`# nn.BatchNorm1d(h),` left out of an `nn.Sequential`) nor in a string or
    docstring.  A text that does not parse is searched with its comments removed."""
    if not _NORM.search(text):
        return False
    return _norm_call_in_code(text)


@lru_cache(maxsize=256)
def _norm_call_in_code(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return any(_NORM.search(line.split("#", 1)[0]) for line in text.splitlines())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if _NORM_NAME.fullmatch(name):
                return True
    return False


def _imported_modules(path: str, text: str) -> list:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
            out += [f"{node.module}.{a.name}" for a in node.names]
    return out


def _report(checker, loop, target: str) -> None:
    checker.report(
        "ADL030", loop,
        f"this loop averages the parameters of `{target}` but nothing here updates its buffers: batch-norm "
        f"running statistics (`running_mean`, `running_var`) are buffers, not parameters, so the averaged model "
        f"keeps the statistics it was created with and normalises with them in eval mode; also average or copy "
        f"the buffers (`for b_ema, b in zip(ema.buffers(), model.buffers()): b_ema.copy_(b)`)")
