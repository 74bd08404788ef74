"""ADL020 across methods: an optimizer handed tensors computed from tensors that
require grad (`[p * gain for p in leaves]` returned by a method, an attribute
bound in `__init__` to a cast after `requires_grad=True`): non-leaf tensors,
which the optimizer refuses at construction ("can't optimize a non-leaf
Tensor").  The list is followed through a name bound once, a method of a plain
class of the file that returns it (`model.trainable()`, a hand-written
`model.parameters()`), and attributes of `self` bound once in `__init__`."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.configured_modules import is_parameter

_FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty", "full", "randn_like", "rand_like",
                        "zeros_like", "ones_like", "empty_like", "full_like", "eye", "linspace", "arange"})
_COPYING_METHODS = frozenset({"clone", "mul", "add", "sub", "div", "neg", "exp", "log", "abs", "sqrt", "pow"})
_DTYPES = {"float64": "float64", "double": "float64", "float32": "float32", "float": "float32",
           "float16": "float16", "half": "float16", "bfloat16": "bfloat16"}
_CAST_METHODS = {"double": "float64", "half": "float16", "bfloat16": "bfloat16", "float": "float32"}
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.MatMult, ast.FloorDiv, ast.Mod)
_SKIP_TEXT = ("retain_grad", "set_default_dtype", "set_grad_enabled", "set_default_tensor_type")


def check_optimizers(checker) -> None:
    """Report (ADL020) the expression making a non-leaf that an optimizer is handed,
    unless ADL020's own check already reported within that optimizer call."""
    source = checker.source
    if not checker.training.optimizers:  # no optimizer of torch.optim bound in the file: nothing to read
        return
    if "requires_grad" not in source and "Parameter" not in source:
        return
    if "optim" not in source or any(t in source for t in _SKIP_TEXT):
        return
    ctx = _Context(checker)
    reported = set()
    for func, cls in ctx.functions:
        for node in ast.walk(func):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            q = checker.qualname(node.func) or ""
            if not q.startswith("torch.optim.") or q.rsplit(".", 1)[-1] not in N.OPTIMIZER_CLASSES:
                continue
            if any(k.arg == "differentiable" for k in node.keywords):
                continue
            found = ctx.non_leaf(node.args[0], func, cls, 0)
            if found is None or id(found[0]) in reported or any(
                    f.code == "ADL020" and node.lineno <= f.line <= (node.end_lineno or node.lineno)
                    for f in checker.findings):
                continue
            reported.add(id(found[0]))
            expr, leaf = found
            name = q.rsplit(".", 1)[-1]
            checker.report(
                "ADL020", expr,
                f"`{checker.text(expr)}` is computed from `{leaf}`, which requires grad: a non-leaf tensor, and "
                f"`{name}(...)` on line {node.lineno} is handed it, so the constructor raises \"ValueError: can't "
                f"optimize a non-leaf Tensor\"; hand the optimizer the leaf tensors and apply the operation in "
                f"the forward pass, or make the tensor in its final form and set `requires_grad` last",
                related=[(node.lineno, checker.col(node.lineno, node.col_offset), 0, "the optimizer")])


def makes_leaf_requiring_grad(checker, expr) -> bool:
    """`nn.Parameter(t)` (without `requires_grad=`) or a torch factory called with
    `requires_grad=True`: the call makes a leaf that requires grad."""
    if not isinstance(expr, ast.Call):
        return False
    q = checker.qualname(expr.func) or ""
    if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return not any(k.arg == "requires_grad" for k in expr.keywords) and len(expr.args) == 1
    if not q.startswith("torch.") or q.rsplit(".", 1)[-1] not in _FACTORIES:
        return False
    return any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in expr.keywords)


class _Context:
    def __init__(self, checker):
        self.checker = checker
        tree = checker.tree
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.class_counts = {}
        for n in tree.body:
            if isinstance(n, ast.ClassDef):
                self.class_counts[n.name] = self.class_counts.get(n.name, 0) + 1
        self.functions = []
        for n in tree.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.append((n, None))
            elif isinstance(n, ast.ClassDef):
                for item in n.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions.append((item, n))

    # -- where a list comes from ------------------------------------------------------

    def non_leaf(self, expr, func, cls, depth):
        """(the expression making a non-leaf tensor, the leaf it is computed from) when
        ``expr`` is a list of which the file shows one element to be a non-leaf."""
        if depth > 6:
            return None
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp)) and len(expr.generators) == 1:
            gen = expr.generators[0]
            if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name) or _grad_off(func):
                return None
            leaves = self.leaves(gen.iter, func, cls, depth + 1)
            if leaves and _copies(expr.elt, gen.target.id):
                return expr.elt, leaves
            return None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple") \
                and len(expr.args) == 1 and not expr.keywords:
            return self.non_leaf(expr.args[0], func, cls, depth + 1)
        if isinstance(expr, (ast.List, ast.Tuple)):
            for e in expr.elts:
                found = self.cast_element(e, func, cls, depth + 1)
                if found is not None:
                    return found
            return None
        value, where = self.bound_once(expr, func, cls)
        if value is not None:
            return self.non_leaf(value, where[0], where[1], depth + 1)
        method = self.method_called(expr, func, cls)
        if method is not None:
            returned = _only_return(method[0])
            if returned is not None:
                return self.non_leaf(returned, method[0], method[1], depth + 1)
        return None

    def cast_element(self, expr, func, cls, depth):
        """An element bound once to `factory(..., requires_grad=True).<cast>` copying."""
        value, where = self.bound_once(expr, func, cls)
        if value is None or not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
            return None
        inner = value.func.value
        if not self.requires_grad_factory(inner) or _grad_off(where[0]):
            return None
        have = _factory_dtype(self.checker, inner)
        want = self.cast_dtype(value, where[0], where[1])
        if have is None or want is None or have == want:
            return None
        return value, self.checker.text(inner)

    def cast_dtype(self, call, func, cls):
        attr = call.func.attr
        if attr in _CAST_METHODS and not call.args and not call.keywords:
            return _CAST_METHODS[attr]
        if attr != "to":
            return None
        dtypes = [a for a in call.args if _dtype_of(a) is not None] + \
            [k.value for k in call.keywords if k.arg == "dtype"]
        if len(dtypes) == 1:
            return _dtype_of(dtypes[0])
        # `.to(device, dtype)` with `dtype` a parameter whose default is a dtype, which no
        # construction of the class in the file passes
        names = [a for a in call.args if isinstance(a, ast.Name)] + \
            [k.value for k in call.keywords if k.arg == "dtype" and isinstance(k.value, ast.Name)]
        for a in names:
            default = self.default_left(a.id, func, cls)
            if default is not None:
                return default
        return None

    def default_left(self, name, func, cls):
        if cls is None or func.name != "__init__" or self.class_counts.get(cls.name) != 1:
            return None
        args = func.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            return None
        positional = args.posonlyargs + args.args
        index = next((i for i, a in enumerate(positional) if a.arg == name), None)
        if index is None:
            return None
        first_default = len(positional) - len(args.defaults)
        if index < first_default:
            return None
        dtype = _dtype_of(args.defaults[index - first_default])
        if dtype is None:
            return None
        calls = [n for n in ast.walk(self.checker.tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name) and n.func.id == cls.name]
        mentions = [n for n in ast.walk(self.checker.tree) if isinstance(n, ast.Name) and n.id == cls.name]
        if not calls or len(calls) != len(mentions):
            return None  # the class is also handed on (a subclass, a factory)
        for c in calls:
            if any(isinstance(a, ast.Starred) for a in c.args) or any(k.arg is None or k.arg == name
                                                                     for k in c.keywords):
                return None
            if len(c.args) >= index:  # `self` is position 0
                return None
        return dtype

    def leaves(self, expr, func, cls, depth):
        """The text of a list of tensors made with `requires_grad=True`, as the file shows."""
        if depth > 6:
            return None
        if isinstance(expr, (ast.List, ast.Tuple)) and expr.elts:
            if all(self.requires_grad_factory(e) for e in expr.elts):
                return self.checker.text(expr.elts[0])
            return None
        value, where = self.bound_once(expr, func, cls)
        if value is not None:
            found = self.leaves(value, where[0], where[1], depth + 1)
            return self.checker.text(expr) if found else None
        return None

    def requires_grad_factory(self, expr) -> bool:
        return makes_leaf_requiring_grad(self.checker, expr)

    def bound_once(self, expr, func, cls):
        """(value, (function, class)) of a name bound once in ``func``, or an attribute of
        `self` bound once in the whole class (and not deleted or augmented)."""
        if isinstance(expr, ast.Name):
            values = _assignments(func, lambda t: isinstance(t, ast.Name) and t.id == expr.id)
            if values is not None and len(values) == 1 and not is_parameter(func, expr.id):
                return values[0], (func, cls)
        elif cls is not None and isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) \
                and expr.value.id == "self":
            found = []
            for item in cls.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    values = _assignments(item, lambda t: isinstance(t, ast.Attribute) and t.attr == expr.attr
                                          and isinstance(t.value, ast.Name) and t.value.id == "self")
                    if values is None:
                        return None, None
                    found += [(v, item) for v in values]
            if len(found) == 1 and found[0][1].name == "__init__":
                return found[0][0], (found[0][1], cls)
        return None, None

    def method_called(self, expr, func, cls):
        """`model.trainable()` with `model = Cls(...)` bound once, or `self.trainable()`:
        (the method, its class)."""
        if not isinstance(expr, ast.Call) or expr.args or expr.keywords or not isinstance(expr.func, ast.Attribute):
            return None
        owner = expr.func.value
        if isinstance(owner, ast.Name) and owner.id == "self" and cls is not None:
            target = cls
        else:
            value, _ = self.bound_once(owner, func, cls)
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                return None
            target = self.classes.get(value.func.id)
            if target is None or self.class_counts.get(target.name) != 1:
                return None
        if target.bases and not all(isinstance(b, ast.Name) and b.id == "object" for b in target.bases):
            return None  # a base (an `nn.Module`) may define the method
        methods = [i for i in target.body if isinstance(i, ast.FunctionDef) and i.name == expr.func.attr]
        return (methods[0], target) if len(methods) == 1 else None


def _assignments(func, matches):
    """The values bound to a target ``matches`` accepts in ``func``; None when it is also
    written another way (augmented, a loop or `with` target, unpacked)."""
    values = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if matches(t):
                    values.append(node.value)
                elif isinstance(t, (ast.Tuple, ast.List)) and any(matches(e) for e in ast.walk(t)):
                    return None
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and matches(node.target):
            return None
        elif isinstance(node, (ast.For, ast.AsyncFor)) and any(matches(e) for e in ast.walk(node.target)):
            return None
        elif isinstance(node, ast.withitem) and node.optional_vars is not None and matches(node.optional_vars):
            return None
        elif isinstance(node, ast.NamedExpr) and matches(node.target):
            return None
    return values


def _only_return(func):
    returns = [n for n in ast.walk(func) if isinstance(n, ast.Return)]
    if len(returns) == 1 and returns[0].value is not None and func.body[-1] is returns[0]:
        return returns[0].value
    return None


def _grad_off(func) -> bool:
    for n in ast.walk(func):
        if isinstance(n, ast.Attribute) and n.attr in ("no_grad", "inference_mode", "enable_grad"):
            return True
        if isinstance(n, ast.Name) and n.id in N.GRAD_OFF_NAMES:
            return True
    return False


def _copies(elt, var: str) -> bool:
    """``elt`` is a new tensor computed from the loop variable (an arithmetic
    operation with it as an operand, or a copying method of it)."""
    def is_var(n):
        return isinstance(n, ast.Name) and n.id == var
    if isinstance(elt, ast.BinOp) and isinstance(elt.op, _ARITHMETIC):
        return is_var(elt.left) or is_var(elt.right)
    if isinstance(elt, ast.UnaryOp) and isinstance(elt.op, ast.USub):
        return is_var(elt.operand)
    if isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute) and elt.func.attr in _COPYING_METHODS:
        return is_var(elt.func.value)
    return False


def _dtype_of(node):
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return _DTYPES.get(node.attr)
    return None


def _factory_dtype(checker, call):
    """The dtype a factory call makes: its `dtype=` when a literal, float32 for a
    floating factory without one (the file does not change the default)."""
    q = checker.qualname(call.func) or ""
    if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return None
    explicit = [k.value for k in call.keywords if k.arg == "dtype"]
    if explicit:
        return _dtype_of(explicit[0])
    if q.rsplit(".", 1)[-1] in ("randn", "rand", "zeros", "ones", "empty", "eye"):
        return "float32"
    return None
