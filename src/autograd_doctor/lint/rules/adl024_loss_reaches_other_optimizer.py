"""ADL024: a loss meant for one network whose backward pass also fills another
network's gradients, which that network's optimizer then steps (no clear between)."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint import names as N
from autograd_doctor.lint.arguments import nested_statements
from autograd_doctor.lint.findings import line_numbers
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.walk import own_nodes

RULE = Rule(
    code="ADL024", name="loss-reaches-other-optimizer",
    summary="A backward pass of a loss computed through another network (a generator's loss through the discriminator) fills that network's gradients, and its optimizer steps them with no clear in between.",
    what_it_does="""In one function (or a script's top level), finds two optimizers built over the
parameters of two different modules, `G` and `D` (`opt_g = Adam(G.parameters())`,
`opt_d = Adam(D.parameters())`), where the function feeds `G`'s output to `D`
detached at least once (`D(fake.detach())`, `D`'s own loss on the fakes: the
evidence that the two networks have separate losses), and a `backward()` whose
loss is computed through `D` called on `G`'s output *not* detached
(`g_loss = -D(fake).mean()`, or a sum holding such a term), followed later in the
function by `opt_d.step()`, with no `zero_grad()` of `opt_d` or of `D` (and no
other clear) between the backward and that step.  Each link is read from the
source: the loss's value is followed through the names it is computed from
(their last binding before the use), stopping at `.detach()` and at bindings
made under `torch.no_grad()`.
Also the other direction (dome272's VQGAN): a `backward()` right after a clear
of only `D`'s optimizer (`opt_d.zero_grad()`, the evidence that it is `D`'s own
loss), whose loss goes through `D` called on `G`'s output not detached, when an
earlier backward of the function came right after a clear of only `G`'s
optimizer (`G` has a loss of its own) and `opt_g.step()` follows with nothing
clearing `G`'s gradients between: `D`'s objective is added into `G`'s update.
Here a binding under an `if` that does not hold the use (`if detach: fake_d =
D(fake.detach())`) leaves the binding before it possible too.""",
    why_bad="""`backward()` fills the gradient of every parameter the loss depends on.
The generator's loss goes through the discriminator's layers, so it also adds to
the discriminator's `.grad`; if nothing clears them before `opt_d.step()`, the
discriminator's step follows the generator's objective too (the opposite of its
own for an adversarial loss).  Nothing raises; the discriminator trains on the
wrong objective (BEGAN-pytorch's trainer, OmniTokenizer, audiolm-pytorch's
SoundStream trainer).""",
    example="""g_optim = torch.optim.Adam(G.parameters())
d_optim = torch.optim.Adam(D.parameters())
fake = G(z)
d_loss = l1(D(x), x) - k * l1(D(fake.detach()), fake.detach())
g_loss = l1(fake, D(fake))
loss = d_loss + g_loss
loss.backward()
g_optim.step()
d_optim.step()""",
    use_instead="""g_optim = torch.optim.Adam(G.parameters())
d_optim = torch.optim.Adam(D.parameters())
fake = G(z)
d_optim.zero_grad()
d_loss = l1(D(x), x) - k * l1(D(fake.detach()), fake.detach())
d_loss.backward()
d_optim.step()
g_optim.zero_grad()
g_loss = l1(fake, D(fake))
g_loss.backward()
g_optim.step()""",
    fix_safety="""No automatic fix: which change is right (clear `D`'s gradients before its own
backward pass, freeze `D` with `requires_grad_(False)` while the other loss
backpropagates, `backward(inputs=...)`, or separate backward passes) depends on the
training scheme.""",
    known_problems="""Only what one function shows is followed: a loss computed in another method
(`self.soundstream(wave)` whose `forward` runs the discriminator, Lightning's
`training_step`) is not, nor a step in a later iteration of the loop (the next
iteration's clear is not looked for, so that case is left silent).  Modules and
optimizers are matched by their text (`opt_d` built over `D.parameters()`
anywhere in the file).  A function that mentions `requires_grad`, a freeze or a
toggle, or calls a same-file function that does, passes `inputs=` to the
backward, or returns/breaks between the backward and the step, is not reported.""",
)

_CUTS = frozenset({"detach", "detach_", "item", "tolist", "numpy"})  # results without a graph
_FREEZE_WORDS = ("requires_grad", "freeze", "toggle")
_REVERSAL_WORDS = ("revers", "grl")
_DEPTH = 40


def check_file(checker) -> None:
    source = checker.source
    if ".backward(" not in source or ".step()" not in source or ".parameters(" not in source:
        return
    # a detached feed (the generator's loss reaching the discriminator's step), or a
    # clear before a backward (the discriminator's loss reaching the generator's step)
    if ".detach()" not in source and ".zero_grad(" not in source:
        return
    optimizers = {text: owners for text, owners in checker.training.optimizers.items() if owners}
    for text, owners in _factory_optimizers(checker).items():
        optimizers.setdefault(text, owners)
    optimizers = {text: _with_whole_module(owners) for text, owners in optimizers.items()}
    if len(optimizers) < 2:
        return
    modules = set().union(*optimizers.values())
    freezers = _functions_that_freeze(checker)
    bodies = [checker.tree.body] + [n.body for n in ast.walk(checker.tree)
                                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for body in bodies:
        _check_body(checker, body, optimizers, modules, freezers)


def _factory_optimizers(checker) -> dict:
    """Optimizers unpacked from a same-file function that returns them in a tuple:
    `g_optim, d_optim = get_optimizer(lr)` where `get_optimizer` returns
    `optimizer(self.G.parameters(), ...), optimizer(self.D.parameters(), ...)`
    (BEGAN-pytorch's trainer): each target -> the module whose `.parameters()` is the
    first argument of the optimizer call at its place."""
    returned = {}
    # Only the functions whose lines call `.parameters(` can return such optimizers: the others'
    # bodies are not walked.
    source = checker.source
    calls_at = line_numbers(source, [m.start() for m in re.finditer(r"\.parameters\(", source)])
    for node in nested_statements(checker.tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and any(node.lineno <= line <= node.end_lineno for line in calls_at):
            values = [r.value for r in own_nodes(node.body) if isinstance(r, ast.Return)]
            if len(values) == 1 and isinstance(values[0], ast.Tuple):
                returned.setdefault(node.name, []).append(_named_calls(node, values[0]))
    found = {}
    for node in ast.walk(checker.tree) if returned else ():
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        tuples = returned.get(name, ())
        targets = node.targets[0].elts
        if len(tuples) != 1 or len(tuples[0].elts) != len(targets):
            continue
        for target, element in zip(targets, tuples[0].elts):
            modules = _optimizer_over_modules(checker, element)
            if modules and isinstance(target, (ast.Name, ast.Attribute)):
                found[checker.text(target)] = modules
    return found


def _named_calls(function, returned: ast.Tuple) -> ast.Tuple:
    """``returned`` with each name bound once in ``function`` to a call replaced by
    that call (`opt_g = Adam(...); ...; return opt_g, opt_d`)."""
    bound: dict = {}
    for node in own_nodes(function.body):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
    elts = [bound[e.id][0] if isinstance(e, ast.Name) and len(bound.get(e.id, ())) == 1
            and isinstance(bound[e.id][0], ast.Call) else e for e in returned.elts]
    return ast.Tuple(elts=elts, ctx=ast.Load())


def _optimizer_over_modules(checker, call) -> set:
    """`optimizer(self.G.parameters(), lr=lr)`, `torch.optim.Adam(G.parameters())`: {`self.G`};
    `Adam(list(self.vq.encoder.parameters()) + list(self.vq.decoder.parameters()))`: both parts."""
    if not isinstance(call, ast.Call) or not call.args or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return set()
    short = call.func.id if isinstance(call.func, ast.Name) else call.func.attr
    if "optim" not in short.lower() and short not in N.OPTIMIZER_CLASSES:
        return set()
    terms, todo = [], [call.args[0]]
    while todo:  # the terms of a `+` of lists
        term = todo.pop()
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Add):
            todo += [term.left, term.right]
        elif isinstance(term, ast.Call) and isinstance(term.func, ast.Name) and term.func.id == "list" \
                and len(term.args) == 1 and not term.keywords:
            todo.append(term.args[0])
        else:
            terms.append(term)
    modules = set()
    for first in terms:
        if not (isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute)
                and first.func.attr == "parameters" and not first.args
                and isinstance(first.func.value, (ast.Name, ast.Attribute))):
            return set()  # a term of unknown parameters
        modules.add(checker.text(first.func.value))
    return modules


def _with_whole_module(owners) -> set:
    """An optimizer over several parts of one module (`self.vqgan.encoder`,
    `self.vqgan.decoder`) also steps that module (`self.vqgan`), whose call runs
    them: the module is added to its owners."""
    owners = set(owners)
    if len(owners) < 2:
        return owners
    paths = [text.split(".") for text in owners]
    prefix = []
    for parts in zip(*paths):
        if len(set(parts)) != 1:
            break
        prefix.append(parts[0])
    if not prefix or prefix == ["self"] or any(len(p) <= len(prefix) for p in paths) \
            or not all(part.isidentifier() for part in prefix):
        return owners
    return owners | {".".join(prefix)}


def _functions_that_freeze(checker) -> set:
    """Names of same-file functions whose source mentions freezing (`requires_grad`)."""
    names = set()
    for node in ast.walk(checker.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            text = "\n".join(checker.lines[node.lineno - 1:node.end_lineno]).lower()
            if any(word in text for word in _FREEZE_WORDS):
                names.add(node.name)
    return names


class _Flow:
    """Which modules' outputs flow, not detached, into an expression of one function."""

    def __init__(self, checker, nodes, modules, conditional_keeps_earlier=False):
        self.checker, self.modules = checker, modules
        # a binding under an `if` that does not hold the use may not run: the binding before
        # it may reach the use too (the other direction's flow only; a union, so more crossings)
        self.if_spans = [(block[0].lineno, block[-1].end_lineno) for n in nodes if isinstance(n, ast.If)
                         for block in (n.body, n.orelse) if block] if conditional_keeps_earlier else []
        self.bindings: dict[str, list] = {}  # target text -> [(line, value)], value None: no graph
        grad_off = [(w.lineno, w.end_lineno) for w in nodes if isinstance(w, (ast.With, ast.AsyncWith))
                    and any(isinstance(i.context_expr, ast.Call) and
                            checker.text(i.context_expr.func).endswith(N.GRAD_OFF_NAMES) for i in w.items)]
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                off = any(a <= node.lineno <= b for a, b in grad_off)
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self._bind(target, node, None if off else node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.NamedExpr)):
                self._bind(node.target, node, None)  # unknown values: nothing followed
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, node, None)
        self.memo: dict = {}
        self.seen_calls = None  # when a list: the module calls the followed values reach

    def _bind(self, target, node, value) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            pairs = zip(target.elts, value.elts) if isinstance(value, (ast.Tuple, ast.List)) and \
                len(value.elts) == len(target.elts) else ((t, value) for t in target.elts)
            for t, v in pairs:
                self._bind(t, node, v)
            return
        if isinstance(target, ast.Starred):
            target = target.value
        if isinstance(target, (ast.Name, ast.Attribute)):
            entry = (node.lineno, value)
            if isinstance(node, ast.AugAssign):  # `loss += term`: the old value and the term
                entry = (node.lineno, ast.BinOp(left=target, op=ast.Add(), right=value) if value else None)
            self.bindings.setdefault(self.checker.text(target), []).append(entry)

    def flows(self, expr, line: int, depth: int = 0):
        """(modules whose output reaches ``expr`` undetached, crossings): a crossing
        is (outer module, inner module, the outer call) where the inner module's output
        reaches the outer module's call undetached."""
        if depth > _DEPTH or expr is None:
            return frozenset(), frozenset()
        if isinstance(expr, (ast.Name, ast.Attribute)):
            text = self.checker.text(expr)
            earlier = sorted(((ln, v) for ln, v in self.bindings.get(text, ()) if ln < line),
                             key=lambda e: e[0], reverse=True)
            if earlier:
                mods, crosses = set(), set()
                for ln, value in earlier:
                    key = (text, ln)
                    if key not in self.memo:
                        self.memo[key] = (frozenset(), frozenset())  # a cycle reaches nothing more
                        self.memo[key] = self.flows(value, ln, depth + 1)
                    mods |= self.memo[key][0]
                    crosses |= self.memo[key][1]
                    if not any(a <= ln <= b and not a <= line <= b for a, b in self.if_spans):
                        break  # this binding runs whenever the use does
                return frozenset(mods), frozenset(crosses)
            if isinstance(expr, ast.Name):
                return frozenset(), frozenset()
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in _CUTS:
                return frozenset(), frozenset()
            mods, crosses = set(), set()
            for arg in list(expr.args) + [k.value for k in expr.keywords]:
                m, c = self.flows(arg, line, depth + 1)
                mods |= m
                crosses |= c
            text = self.checker.text(func) if isinstance(func, (ast.Name, ast.Attribute)) else ""
            if text in self.modules:
                if self.seen_calls is not None:
                    self.seen_calls.append(expr)
                crosses |= {(text, inner, expr) for inner in mods if inner != text}
                mods.add(text)
            elif isinstance(func, ast.Attribute):
                m, c = self.flows(func.value, line, depth + 1)
                mods |= m
                crosses |= c
            return frozenset(mods), frozenset(crosses)
        if isinstance(expr, (ast.Lambda, ast.Constant)):
            return frozenset(), frozenset()
        mods, crosses = set(), set()
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, ast.expr):
                m, c = self.flows(child, line, depth + 1)
                mods |= m
                crosses |= c
        return frozenset(mods), frozenset(crosses)


def _check_body(checker, body, optimizers, modules, freezers) -> None:
    nodes = [n for n in own_nodes(body) if hasattr(n, "lineno")]
    calls = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    backwards = [c for c in calls if c.func.attr == "backward"]
    steps = [c for c in calls if c.func.attr == "step" and not c.args and checker.text(c.func.value) in optimizers]
    if not backwards or not steps:
        return
    _check_own_loss_through_other_output(checker, body, nodes, backwards, steps, optimizers, modules, freezers)
    if ".detach()" not in checker.source:
        return  # no detached feed anywhere: no evidence for the first direction
    flow = _Flow(checker, nodes, modules)
    separate = _detached_feeds(checker, nodes, flow, modules)
    if not separate:
        return  # no evidence that the networks have separate losses
    for backward in backwards:
        if any(k.arg == "inputs" for k in backward.keywords):
            continue
        _, crosses = flow.flows(backward.func.value, backward.lineno + 1)
        for outer, inner, call in sorted(crosses, key=lambda c: (c[2].lineno, c[2].col_offset)):
            if (inner, outer) not in separate:
                continue
            step = _uncleared_step(checker, body, nodes, backward, outer, inner, optimizers, steps, freezers)
            if step is not None and _stepped_loss_is_own(checker, nodes, backwards, backward, step, outer, inner,
                                                         optimizers, modules):
                break  # the step applies this loss's gradients alone: `outer`'s own loss
            if step is not None:
                _report(checker, backward, call, step, outer, inner)
                break


def _stepped_loss_is_own(checker, nodes, backwards, backward, step, outer, inner, optimizers, modules) -> bool:
    """`enc_opt.zero_grad(); q1_opt.zero_grad(); q1_loss.backward(); q1_opt.step()`
    with `q1_loss` through `Q1(enc(s))` (a critic over a shared encoder): `outer`'s
    optimizer (or `outer`) is cleared after the function's previous backward and
    before this one, and no other backward runs before its step, so the step applies
    this loss's gradients alone: the loss is `outer`'s own, not another network's.
    A loss that also holds `outer`'s detached feed of ``inner`` (`d_loss + g_loss`
    with `D(fake.detach())` in `d_loss`, BEGAN) sums two networks' losses: not own."""
    previous = max((b.lineno for b in backwards if b.lineno < backward.lineno), default=0)
    if any(backward.lineno < b.lineno < step.lineno for b in backwards):
        return False
    own = {t for t, owners in optimizers.items() if outer in owners} | {outer}
    if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "zero_grad"
               and checker.text(n.func.value) in own and previous < n.lineno < backward.lineno
               for n in nodes):
        return False
    flow = _Flow(checker, nodes, modules)
    flow.seen_calls = []
    flow.flows(backward.func.value, backward.lineno + 1)
    for call in flow.seen_calls:
        if checker.text(call.func) != outer:
            continue
        for arg in list(call.args) + [k.value for k in call.keywords]:
            for detached in _detached_values(checker, flow, arg, call.lineno):
                if inner in flow.flows(detached, call.lineno)[0]:
                    return False  # `outer`'s own term on detached input is in this loss too
    return True


def _check_own_loss_through_other_output(checker, body, nodes, backwards, steps, optimizers, modules,
                                         freezers) -> None:
    """`opt_g.zero_grad(); g_loss.backward(retain_graph=True); opt_d.zero_grad();
    d_loss.backward(); opt_g.step()` where `d_loss` goes through `D(fake)`, `fake =
    G(z)` not detached (dome272's VQGAN): the backward right after a clear of only
    `D`'s optimizer is `D`'s own, and it also fills `G`'s gradients, which `opt_g`
    then steps (nothing clears them between).  Evidence that `G` has a loss of its
    own: an earlier backward in the function right after a clear of only `G`'s
    optimizer."""
    clears = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "zero_grad"]
    if len(backwards) < 2 or len(clears) < 2:
        return
    body_text = "\n".join(checker.lines[body[0].lineno - 1:body[-1].end_lineno]).lower()
    if any(word in body_text for word in _REVERSAL_WORDS):
        return  # a gradient reversal layer: `D`'s loss is meant to reach `G` (domain-adversarial training)
    ordered = sorted(backwards, key=lambda b: (b.lineno, b.col_offset))
    cleared_for = []  # per backward: the texts cleared since the backward before it
    for i, backward in enumerate(ordered):
        start = ordered[i - 1].lineno if i else 0
        cleared_for.append({checker.text(c.func.value) for c in clears if start < c.lineno < backward.lineno})
    may_flow = None
    for i, backward in enumerate(ordered):
        if i == 0 or any(k.arg == "inputs" for k in backward.keywords):
            continue
        own = _only_cleared_module(cleared_for[i], optimizers)
        if own is None:
            continue
        if may_flow is None:
            may_flow = _Flow(checker, nodes, modules, conditional_keeps_earlier=True)
        _, crosses = may_flow.flows(backward.func.value, backward.lineno + 1)
        for outer, inner, call in sorted(crosses, key=lambda c: (c[2].lineno, c[2].col_offset)):
            if outer != own or not any(_only_cleared_module(cleared, optimizers) == inner
                                       for cleared in cleared_for[:i]):
                continue
            step = _uncleared_step(checker, body, nodes, backward, inner, outer, optimizers, steps, freezers)
            if step is not None:
                clear = max((c for c in clears if c.lineno < backward.lineno
                             and checker.text(c.func.value) in cleared_for[i]), key=lambda c: c.lineno)
                _report_other_direction(checker, backward, call, step, clear, outer, inner)
                return


def _only_cleared_module(cleared: set, optimizers: dict):
    """The one module whose gradients these clears (optimizer texts) clear, when
    they clear exactly one known module (or parts of one: the whole module)."""
    owners = set()
    for text in cleared:
        if text in optimizers:
            owners |= set(optimizers[text])
        else:
            return None  # something else cleared: which gradients is not known
    wholes = [m for m in owners if all(o == m or o.startswith(m + ".") for o in owners)]
    return wholes[0] if len(wholes) == 1 else None


def _detached_feeds(checker, nodes, flow, modules) -> set:
    """(inner, outer) pairs where the function calls module ``outer`` on ``inner``'s
    output detached: `D(fake.detach())`, or `D(fake_d)` after `fake_d = fake.detach()`,
    with `fake = G(z)`."""
    pairs = set()
    for call in nodes:
        if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        outer = checker.text(call.func)
        if outer not in modules:
            continue
        for arg in list(call.args) + [k.value for k in call.keywords]:
            for detached in _detached_values(checker, flow, arg, call.lineno):
                inner_modules, _ = flow.flows(detached, call.lineno)
                pairs |= {(inner, outer) for inner in inner_modules if inner != outer}
    return pairs


def _detached_values(checker, flow, arg, line):
    """The receivers of the `.detach()` calls in ``arg``, and of a name's binding
    `x = y.detach()` that ``arg`` reads."""
    for node in ast.walk(arg):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
            yield node.func.value
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            earlier = [(ln, v) for ln, v in flow.bindings.get(checker.text(node), ()) if ln < line]
            if earlier:
                _, value = max(earlier, key=lambda e: e[0])
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                        value.func.attr == "detach":
                    yield value.func.value


def _uncleared_step(checker, body, nodes, backward, outer, inner, optimizers, steps, freezers):
    """The first step, after ``backward``, of an optimizer over ``outer`` but not
    ``inner``, with nothing between that could clear or protect ``outer``'s gradients."""
    outer_optimizers = {t for t, owners in optimizers.items() if outer in owners and inner not in owners}
    inner_optimizers = {t for t, owners in optimizers.items() if inner in owners and outer not in owners}
    if not outer_optimizers or not inner_optimizers:
        return None
    body_text = "\n".join(checker.lines[body[0].lineno - 1:body[-1].end_lineno]).lower()
    if any(word in body_text for word in _FREEZE_WORDS):
        return None
    if any(isinstance(c.func, (ast.Name, ast.Attribute)) and
           (c.func.id if isinstance(c.func, ast.Name) else c.func.attr) in freezers
           for c in nodes if isinstance(c, ast.Call)):
        return None
    inner_side = set(inner_optimizers) | {inner}
    for step in sorted(steps, key=lambda s: (s.lineno, s.col_offset)):
        if step.lineno <= backward.lineno or checker.text(step.func.value) not in outer_optimizers:
            continue
        between = [n for n in nodes if backward.lineno < n.lineno < step.lineno
                   or (n.lineno == step.lineno and n is not step and n.col_offset < step.col_offset)]
        if any(isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Raise, ast.Yield, ast.YieldFrom,
                              ast.Await)) for n in between):
            return None
        for n in between:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "zero_grad" \
                    and checker.text(n.func.value) not in inner_side:
                return None  # a clear of the other network (or of something that may hold it)
            if isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, ast.Store):
                return None
            if isinstance(n, ast.Call) and "zero_grad" in checker.text(n.func) and not (
                    isinstance(n.func, ast.Attribute) and n.func.attr == "zero_grad"):
                return None  # `zero_grads(params)`, `self.reset_grad()`-like helpers
            if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)) and \
                    "grad" in (n.func.id if isinstance(n.func, ast.Name) else n.func.attr).lower() and \
                    not (isinstance(n.func, ast.Attribute) and n.func.attr in ("zero_grad", "backward")):
                return None  # a helper that may clear gradients (`reset_grad()`)
        if _exclusive(nodes, backward, step):
            return None
        return step
    return None


def _exclusive(nodes, a, b) -> bool:
    """``a`` and ``b`` lie in different branches of one `if` (or `try` handlers)."""
    for node in nodes:
        if isinstance(node, ast.If) and node.orelse:
            in_body = [node.body[0].lineno <= x.lineno <= node.body[-1].end_lineno for x in (a, b)]
            in_else = [node.orelse[0].lineno <= x.lineno <= node.orelse[-1].end_lineno for x in (a, b)]
            if (in_body[0] and in_else[1]) or (in_body[1] and in_else[0]):
                return True
        if isinstance(node, ast.Try) and node.handlers:
            spans = [(node.body[0].lineno, node.body[-1].end_lineno)] + \
                [(h.lineno, h.end_lineno) for h in node.handlers]
            where = [next((i for i, (s, e) in enumerate(spans) if s <= x.lineno <= e), None) for x in (a, b)]
            if None not in where and where[0] != where[1]:
                return True
    return False


def _report_other_direction(checker, backward, call, step, clear, own, other) -> None:
    optimizer = checker.text(step.func.value)
    checker.report(
        "ADL024", backward,
        f"this backward pass is `{own}`'s own (only `{checker.text(clear.func.value)}` is cleared before it, "
        f"on line {clear.lineno}), but it goes through `{checker.text(call)}` on line {call.lineno}, `{own}` "
        f"called on `{other}`'s output not detached, so it also fills `{other}`'s gradients, and "
        f"`{optimizer}.step()` on line {step.lineno} applies them with `{other}`'s own (nothing clears them "
        f"between): `{own}`'s objective trains `{other}` too; detach `{other}`'s output in this loss "
        f"(`{checker.text(call.func)}(....detach())`), or step `{optimizer}` before this backward",
        related=[(call.lineno, checker.col(call.lineno, call.col_offset), 0,
                  f"`{own}` runs on `{other}`'s output here, not detached"),
                 (step.lineno, checker.col(step.lineno, step.col_offset), 0,
                  f"`{other}`'s optimizer steps the summed gradients here")])


def _report(checker, backward, call, step, outer, inner) -> None:
    optimizer = checker.text(step.func.value)
    checker.report(
        "ADL024", backward,
        f"this backward pass goes through `{checker.text(call)}` on line {call.lineno}, `{outer}` called on "
        f"`{inner}`'s output not detached, so it also fills `{outer}`'s gradients, and "
        f"`{optimizer}.step()` on line {step.lineno} applies them with `{outer}`'s own (nothing clears "
        f"them between): the other network's loss trains `{outer}` too; clear `{optimizer}`'s gradients "
        f"before `{outer}`'s own backward pass, freeze `{outer}` (`requires_grad_(False)`) while this "
        f"loss backpropagates, or pass `inputs=` to this backward",
        related=[(call.lineno, checker.col(call.lineno, call.col_offset), 0,
                  f"`{outer}` runs on `{inner}`'s output here, not detached"),
                 (step.lineno, checker.col(step.lineno, step.col_offset), 0,
                  f"`{outer}`'s optimizer steps the summed gradients here")])
