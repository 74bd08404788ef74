"""ADL041: an actor's loss that detaches the critic's value of the action the actor
has just produced (SAC / DDPG / TD3 actor updates): the only path from the loss into
the actor through the critic is cut, and the actor is trained on the other terms alone."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.names import GRAD_OFF_NAMES as _GRAD_OFF, last_name
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL041", name="actor-loss-detaches-critic-value", needs_gradients=True,
    summary="An actor's loss that detaches the critic's value of the actor's own action "
            "(`(alpha * logp - q.detach()).mean()`, `-critic(s, actor(s)).detach().mean()`): "
            "the actor never moves towards a higher value.",
    what_it_does="""In a function that calls `backward()` on a loss and then `step()` on an
optimizer (before the next backward) that steps a module (the actor), finds a
`.detach()` or `.data` of a value that enters the loss only additively (through
`+`, `-`, unary minus, `.mean()` / `.sum()` and the names the loss is assigned
from), when every link has evidence:
(a) the detached value is the result of a call of another module or function
(the critic: `critic(s, a)`, `self.critic.Q1(s, a)`, through `torch.min` of two
such values) given an action computed in the same function from a call of the
actor (`actor(s)`, `self.actor.sample(s)`, a reparameterised sample
`mean + std * noise`, `tanh` of it, `dist.rsample()`), not cut on the way
(`.detach()`, a distribution's `.sample()`, `argmax`, `no_grad`); an actor method
defined in the file that samples without reparameterisation (`.sample(` and no
`rsample`, `multinomial`, `argmax`, `Categorical`, `no_grad`) breaks the link;
(b) the loss holding it is backpropagated in the same function;
(c) an optimizer over the actor's parameters steps after that backward and
before the next one (bound in the file to the actor's parameters or, when the
file does not bind it, e.g. a function's argument, named for the actor:
`actor_opt`, `policy_optimizer`, the actor then being a module called in the
function whose name shares that word);
(d) no other part of the loss reads a value of that action's critic undetached.""",
    why_bad="""In a deterministic or reparameterised actor update the objective is
`E[alpha * log pi(a|s) - Q(s, a(s))]`: its gradient reaches the actor through
the critic's value of the action.  A detached value added to the loss
contributes nothing to any gradient, so the actor is trained on the entropy term
alone (SAC) or not at all (DDPG, TD3: the loss has no gradient path and
`backward()` raises, or other terms alone move it), and never towards actions
the critic values more.  Nothing raises in SAC.""",
    example="""mean, std = actor(s)
new_a = torch.tanh(mean + std * noise)
log_prob = torch.distributions.Normal(mean, std).log_prob(mean + std * noise).sum(-1)
actor_loss = (alpha * log_prob - critic(s, new_a).detach()).mean()
actor_opt.zero_grad()
actor_loss.backward()
actor_opt.step()""",
    use_instead="""mean, std = actor(s)
new_a = torch.tanh(mean + std * noise)
log_prob = torch.distributions.Normal(mean, std).log_prob(mean + std * noise).sum(-1)
actor_loss = (alpha * log_prob - critic(s, new_a)).mean()
actor_opt.zero_grad()
actor_loss.backward()
actor_opt.step()
critic_opt.zero_grad()   # before the critic's own step: the actor's loss filled its .grad""",
    fix_safety="""Unsafe fix: drop the `.detach()` (or `.data`).  It changes training, as it
should: the actor's gradient then follows the critic.  The actor's backward also
fills the critic's `.grad`; clear them before the critic's next step (most
updates do so with `critic_opt.zero_grad()` there).""",
    known_problems="""Only a detached value that enters the loss additively is reported (one
weighted by another tensor, as in a likelihood-ratio loss, is not); the actor,
the critic call and the backward must be in one function, and the optimizer
bound in the file to the actor's parameters.  An actor method defined in another
file that is called by name (`self.actor.sample(s)`) is not read: whether its
sample is reparameterised is unknown, and the rule stays silent (a plain call
`actor(s)` is taken for a deterministic action unless a `forward` of the file
samples without reparameterisation).""",
)

_CUT = frozenset({"detach", "detach_", "item", "sample", "argmax", "argmin", "multinomial", "numpy",
                  "tolist", "long", "int", "bool", "size", "sign", "round", "floor", "ceil"})
_NOT_CRITIC = frozenset({"log_prob", "entropy", "cdf", "icdf", "gather", "index_select", "mul", "add", "sub",
                         "div", "matmul", "mm", "bmm", "view", "reshape", "expand", "repeat", "clamp", "clip",
                         "squeeze", "unsqueeze", "mean", "sum", "min", "max", "to", "float", "double",
                         "tanh", "sigmoid", "exp", "log", "pow", "abs", "flatten", "transpose", "permute"})
_LIBRARIES = frozenset({"torch", "F", "nn", "np", "numpy", "math", "functional", "jnp", "tf"})
_BUILTINS = frozenset({"min", "max", "sum", "abs", "len", "float", "int", "list", "tuple", "zip", "map",
                       "range", "print", "isinstance", "getattr", "dict", "round", "any", "all", "sorted"})
_REDUCTIONS = frozenset({"mean", "sum"})
_NOT_REPARAMETERISED = re.compile(r"\.sample\(|multinomial|argmax|Categorical|no_grad|OneHot")
_DEPTH = 12
_ACTOR_WORDS = ("actor", "policy")


def check_file(checker) -> None:
    source = checker.source
    # the cheap tests first: most files have no detach, or no step
    if "backward" not in source or ".step()" not in source or \
            (".detach()" not in source and ".data" not in source):
        return
    methods = {}  # filled on first use: name -> the file's functions of that name
    for func in _functions(checker.tree):
        text = checker.text(func)
        if "backward" not in text or (".detach()" not in text and ".data" not in text):
            continue
        _Function(checker, func, methods).check()


def _functions(tree):
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield item
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _grad_off(node) -> bool:
    """`torch.no_grad()`, `no_grad()`, `torch.inference_mode` as a with item."""
    return last_name(node.func if isinstance(node, ast.Call) else node) in _GRAD_OFF


def _flatten(body, off=False, depth=0):
    """(simple statement, grad off, nesting depth) in source order."""
    for stmt in body:
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            inner = off or any(_grad_off(item.context_expr) for item in stmt.items)
            yield from _flatten(stmt.body, inner, depth + 1)
        elif isinstance(stmt, ast.If):
            yield from _flatten(stmt.body, off, depth + 1)
            yield from _flatten(stmt.orelse, off, depth + 1)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            yield from _flatten(stmt.body, off, depth + 1)
            yield from _flatten(stmt.orelse, off, depth + 1)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                yield from _flatten(block, off, depth + 1)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        else:
            yield stmt, off, depth


def _dotted(node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _root(node) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


class _Function:
    def __init__(self, checker, func, methods):
        self.checker, self.func, self.methods = checker, func, methods
        self.statements = list(_flatten(func.body))
        self.bindings = {}  # name -> [(index, value or None, grad off, depth, augmented)]
        for index, (stmt, off, depth) in enumerate(self.statements):
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    self._bind(target, stmt.value, index, off, depth)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._bind(stmt.target, stmt.value, index, off, depth)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                self.bindings.setdefault(stmt.target.id, []).append((index, stmt.value, off, depth, True))
        self.parameters = {a.arg for a in func.args.args + func.args.kwonlyargs}

    def _bind(self, target, value, index, off, depth):
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append((index, value, off, depth, False))
        elif isinstance(target, (ast.Tuple, ast.List)):
            elements = value.elts if isinstance(value, (ast.Tuple, ast.List)) and \
                len(value.elts) == len(target.elts) else None
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Name):
                    self.bindings.setdefault(t.id, []).append(
                        (index, elements[i] if elements is not None else value, off, depth, False))

    def live(self, name, before):
        """The bindings of ``name`` that may reach statement ``before``: walking back,
        up to and including the first one at the function's top level."""
        out = []
        for entry in reversed(self.bindings.get(name, ())):
            if entry[0] >= before:
                continue
            out.append(entry)
            if entry[3] == 0 and not entry[4]:
                break
        return out

    # -- links ---------------------------------------------------------------------
    def check(self):
        optimizers = self.checker.training.optimizers
        backwards = []
        for index, (stmt, off, _) in enumerate(self.statements):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "backward" and not off:
                    backwards.append((index, node))
                    break
        for k, (index, call) in enumerate(backwards):
            end = backwards[k + 1][0] if k + 1 < len(backwards) else len(self.statements)
            owners = set()
            for stmt, _, _ in self.statements[index:end]:
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr == "step" and not node.args:
                        text = self.checker.text(node.func.value)
                        known = optimizers.get(text)
                        owners |= set(known) if known is not None else self.owners_by_name(text)
            if owners:
                self.check_backward(index, call, owners)

    def owners_by_name(self, optimizer: str) -> set:
        """An optimizer the file does not bind (a function's argument): the actor's by
        its name (`actor_opt`, `policy_optimizer`), with the modules of the function whose
        names share the word (`actor`, `self.policy`)."""
        lowered = optimizer.lower()
        words = [w for w in _ACTOR_WORDS if w in lowered]
        if not words:
            return set()
        out = set()
        for node in ast.walk(self.func):
            if isinstance(node, ast.Call):
                for callee in (node.func, getattr(node.func, "value", None)):
                    if isinstance(callee, (ast.Name, ast.Attribute)) and _dotted(callee):
                        text = self.checker.text(callee)
                        last = text.rsplit(".", 1)[-1].lower()
                        if any(w in last for w in words) and not any(o in last for o in ("opt", "optim")):
                            out.add(text)
        return out

    def check_backward(self, index, call, owners):
        receiver = call.func.value
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) \
                and receiver.func.attr in _REDUCTIONS and not receiver.args:
            receiver = receiver.func.value
        self.owners = owners
        roots = []  # (statement reported, expression, index)
        augmented = False
        if isinstance(receiver, ast.Name):
            for entry in self.live(receiver.id, index):
                augmented = augmented or entry[4]
                if entry[1] is not None and not entry[2]:
                    roots.append((self.statements[entry[0]][0], entry[1], entry[0]))
        else:
            roots.append((self.statements[index][0], receiver, index))
        for stmt, expr, at in roots:
            for detach, value, where in self.additive_cuts(expr, at, 0):
                if not self.q_of_action(value, where, 0):
                    continue
                # (d) within this binding (the others are other paths), all of them when the
                # loss is accumulated (`loss += ...`)
                parts = roots if augmented else [(stmt, expr, at)]
                if any(self.undetached_q(e, i, 0) for _, e, i in parts):
                    return
                self.report(stmt, detach, value)
                return

    def additive_cuts(self, expr, at, depth):
        """(cut node, the value cut, statement index) for each `.detach()` / `.data`
        reached from ``expr`` through additive operations and names only."""
        if depth > _DEPTH:
            return
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            if expr.func.attr == "detach" and not expr.args:
                yield expr, expr.func.value, at
                return
            if expr.func.attr in _REDUCTIONS and not expr.args:
                inner = expr.func.value
                if isinstance(inner, ast.Attribute) and inner.attr == "data" or \
                        isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                        and inner.func.attr == "detach":
                    yield from self.additive_cuts(inner, at, depth + 1)
                    return
                yield from self.additive_cuts(inner, at, depth + 1)
                return
            if self.checker.text(expr.func) in ("torch.mean", "torch.sum") and len(expr.args) == 1:
                yield from self.additive_cuts(expr.args[0], at, depth + 1)
            return
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            yield expr, expr.value, at
            return
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            yield from self.additive_cuts(expr.left, at, depth + 1)
            yield from self.additive_cuts(expr.right, at, depth + 1)
        elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            yield from self.additive_cuts(expr.operand, at, depth + 1)
        elif isinstance(expr, ast.Name):
            for entry in self.live(expr.id, at):
                if entry[1] is not None and not entry[2]:
                    yield from self.additive_cuts(entry[1], entry[0], depth + 1)

    def module_like(self, func) -> bool:
        """A call of a module or function, not of a tensor's method nor a library op."""
        checker = self.checker
        if isinstance(func, ast.Name):
            name = func.id
            if name in _BUILTINS or name in _LIBRARIES:
                return False
            return self.holds_module(name)
        if isinstance(func, ast.Attribute) and _dotted(func.value):
            if func.attr in _NOT_CRITIC or _root(func) in _LIBRARIES:
                return False
            if isinstance(func.value, ast.Name):
                return func.value.id == "self" or self.holds_module(func.value.id)
            return _root(func) == "self" or checker.text(func.value) in self.owners
        return False

    def holds_module(self, name) -> bool:
        """A name not bound in the function (an argument, a global), or bound to a
        constructed object (`Critic()`, `copy.deepcopy(critic)`)."""
        entries = self.bindings.get(name)
        if not entries:
            return True
        for _, value, _, _, _ in entries:
            if not isinstance(value, ast.Call):
                return False
            f = value.func
            last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if not (last[:1].isupper() or last == "deepcopy"):
                return False
        return True

    def defs(self, name):
        if not self.methods:
            for node in ast.walk(self.checker.tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.methods.setdefault(node.name, []).append(node)
            self.methods.setdefault("", [])
        return self.methods.get(name, [])

    def is_owner_call(self, call):
        """``call`` calls the actor (an owner of the optimizer that steps) or one of its
        methods; then whether what it returns is differentiable in the actor (None: unknown)."""
        text = self.checker.text(call.func)
        if text in self.owners:
            defs = self.defs("forward")
            return all(not _NOT_REPARAMETERISED.search(self.checker.text(d)) for d in defs)
        if isinstance(call.func, ast.Attribute) and self.checker.text(call.func.value) in self.owners:
            defs = self.defs(call.func.attr)
            if not defs:
                return None
            return all(not _NOT_REPARAMETERISED.search(self.checker.text(d)) for d in defs)
        return False

    def from_actor(self, expr, at, depth) -> bool:
        """``expr`` carries a differentiable value computed from the actor's call."""
        if depth > _DEPTH or expr is None:
            return False
        if isinstance(expr, ast.Call):
            found = self.is_owner_call(expr)
            if found is None:
                return False
            if found:
                return True
            func = expr.func
            if isinstance(func, ast.Attribute):
                if func.attr in _CUT:
                    return False
                if self.from_actor(func.value, at, depth + 1):
                    return True
            return any(self.from_actor(a, at, depth + 1) for a in expr.args) or \
                any(self.from_actor(k.value, at, depth + 1) for k in expr.keywords)
        if isinstance(expr, ast.Name):
            return any(not off and self.from_actor(value, i, depth + 1)
                       for i, value, off, _, _ in self.live(expr.id, at))
        if isinstance(expr, ast.Attribute):
            return expr.attr not in ("data", "grad", "shape") and self.from_actor(expr.value, at, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self.from_actor(expr.left, at, depth + 1) or self.from_actor(expr.right, at, depth + 1)
        if isinstance(expr, ast.UnaryOp):
            return self.from_actor(expr.operand, at, depth + 1)
        if isinstance(expr, ast.Subscript):
            return self.from_actor(expr.value, at, depth + 1)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return any(self.from_actor(e, at, depth + 1) for e in expr.elts)
        return False

    def critic_call(self, node, at) -> bool:
        return isinstance(node, ast.Call) and self.module_like(node.func) and not self.is_owner_call(node) \
            and not (isinstance(node.func, ast.Attribute) and self.checker.text(node.func.value) in self.owners) \
            and any(self.from_actor(a, at, 0) for a in list(node.args) + [k.value for k in node.keywords])

    def q_of_action(self, expr, at, depth) -> bool:
        """``expr`` is (computed from) a critic's value of the actor's action."""
        if depth > _DEPTH:
            return False
        for node in ast.walk(expr):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CUT:
                return False  # a cut inside: not followed
            if self.critic_call(node, at):
                return True
            if isinstance(node, ast.Name) and any(
                    not off and value is not None and self.q_of_action(value, i, depth + 1)
                    for i, value, off, _, _ in self.live(node.id, at)):
                return True
        return False

    def undetached_q(self, expr, at, depth) -> bool:
        """Some part of ``expr`` reads a critic's value of the action not through a cut."""
        if depth > _DEPTH or expr is None:
            return False
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CUT:
            return False
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            return False
        if self.critic_call(expr, at):
            return True
        if isinstance(expr, ast.Name):
            return any(not off and self.undetached_q(value, i, depth + 1)
                       for i, value, off, _, _ in self.live(expr.id, at))
        return any(self.undetached_q(child, at, depth + 1) for child in ast.iter_child_nodes(expr))

    def report(self, stmt, detach, value):
        checker = self.checker
        how = "`.data`" if isinstance(detach, ast.Attribute) else "`.detach()`"
        actor = " / ".join(f"`{o}`" for o in sorted(self.owners))
        where = "" if detach.lineno == stmt.lineno else f" (line {detach.lineno})"
        fix = Fix(f"drop {how}: read `{checker.text(value)}` itself", (checker.edit(detach, checker.atom_text(value)),),
                  safe=False)
        checker.report(
            "ADL041", stmt,
            f"the actor's loss detaches the critic's value of the actor's own action with {how}{where}: "
            f"`{checker.text(value)}` is computed from an action of {actor}, whose optimizer steps after this "
            f"backward, and the detached value only adds a constant, so the only path from the loss into the "
            f"actor through the critic is cut and the actor is never moved towards a higher value; drop {how} "
            f"(and clear the critic's gradients before its own step)", fix=fix)
