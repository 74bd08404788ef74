"""ADL003: an optimizer step between building a graph and backpropagating through it."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint import names as N
from autograd_doctor.lint.clearing import spread_to_callers
from autograd_doctor.lint.constructor_optimizers import constructor_optimizer_owners
from autograd_doctor.lint.walk import own_nodes
from autograd_doctor.lint.held_methods import returns_own_parameters, uses_no_layer
from autograd_doctor.lint.joined_outputs import crossings
from autograd_doctor.lint.project_factories import own_returns
from autograd_doctor.lint.modules import RETURN_THE_MODULE
from autograd_doctor.lint.project_forwards import forward_position_layers
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL003", name="step-before-backward-of-older-graph", needs_gradients=True,
    summary="`optimizer.step()` runs after a graph was built from the parameters it updates, and before a `backward()` through that graph.",
    what_it_does="""Finds `opt.step()` (or AMP's `scaler.step(opt)`) followed, in the same
function, by a `backward()` whose loss was computed (directly or through
intermediate names) from a value that was built *before* the step by calling
a module whose parameters `opt` updates.  Which module an optimizer updates
comes from its construction anywhere in the file:
`opt = torch.optim.Adam(model.parameters())`, `itertools.chain(a.parameters(),
b.parameters())`, parameter lists and groups, and an optimizer class passed
as a parameter whose default is one (`optimizer_class=optim.Adam`).  Values cut from the graph
(`.detach()`, `.item()`, `.data`, computed under `no_grad`) do not count, nor
do the results of a module's own methods that use none of its layers or
parameters (`self.make_batch()` turning stored transitions into tensors), or
the results of a held module's method that its class, found in the
repository, writes using the module only for sizes and flags
(`self.critic.build_inputs(batch)` stacking batch fields and
`torch.eye(self.n_agents)`), or of a module whose class's `forward` returns
its own parameters (`return self.embeds`, an `nn.ParameterDict`).  A name
rebound to a new module after the value was computed (`model =
LogReg(...)`; not `model = model.to(device)`) is another module.  This
is the GAN / actor-critic pattern: `d_real = D(x)`,
`d_loss.backward(retain_graph=True)`, `d_opt.step()`, then `g_loss`, computed
from `d_real`, `.backward()`; and the SAC/TD3 twin-critic idiom: the actor's
loss takes `torch.min(q1(s, a), q2(s, a))` of the critics, whose optimizers
step before `actor_loss.backward()`.  The graph is followed through
`torch.min`/`max` (not their indices), `chunk`/`split`, and backward passes
that a framework runs (`accelerator.backward(loss)`,
`scaler.scale(loss).backward()`, `self.manual_backward(loss)`).  In a loop,
a value carried into the next iteration is old there too: `output, state =
model(X, state)` bound once in the body, before the step, read again by the
next iteration's call (the recurrent state whose `.detach()` result was
dropped), when every backward pass in the loop retains its graph; a nested
target counts like the names one level up (`out, (h, c) = lstm(x, (h, c))`).
Across the iterations of a loop over a list of objects (the multi-agent
learner): each object's module output appended to a list in an earlier loop
over the same list and joined (`mu = torch.cat(all_mu, dim=1)`), then, in the
loop's own statements, a backward through the joined value that keeps its graph
and a write of the object's module in place -- `agent.actor.optimizer.step()`
(an optimizer its class builds over `self.parameters()`),
`agent.actor_optimizer.step()` (built over `self.actor.parameters()`), or a
method of the object's class that writes it (`agent.update_network_parameters()`
by `load_state_dict` or `t.mul_(...)`; not through `.data`); the classes are read
from the file and the project files it imports them from (joined_outputs.py).
A same-class method called with the graph counts at its call: one that steps
an optimizer held on `self`, or backpropagates through its arguments
(`self.gen_update(preds)` stepping the generator before
`self.dis_update(preds)` backpropagates), both in its own body outside any
`if`, loop or `try` (an argument passed by keyword too); the report names the
method's `step()` and the call.  Values handed between methods and functions
count: an attribute of `self` that another method of the class computed from
the stepped module (`self.fake = self.gen(z)` in `forward`, read after the
step in the loss method; not when the method gives it a value itself or calls
a method that does after the step), a `for` target's iterable (`for out, y in
zip(outputs, targets)`), a list filled with `append`, and a parameter of a
top-level function that every call in the file fills with such a value
(`update(log_probs)`).
A module's parameters written in place otherwise count as its step:
`model.load_state_dict(...)` (first-order MAML restoring the starting weights
before the meta backward) and `p.copy_(...)` (or any in-place write, not
through `.data`) for `p` in `model.parameters()`.  A top-level function of the
file whose every `return` is computed by calling one of its parameters
(`def evaluate(model, batches): ... model(x) ...`) counts at its calls as a
call of the module passed there.
An optimizer's parameters are followed through a list built from modules'
parameters, also filtered (`[p for p in params if p.requires_grad]`) or
concatenated (`list(a.parameters()) + list(b.parameters())`, or grown with
`self.parameters_to_train += list(...)`).  Modules kept in a dict under constant
keys (`self.models = {"encoder": ..., "decoder": ...}`, `self.models["depth"] =
...`, `nn.ModuleDict({...})`) are layers too: `self.models["decoder"](x)` calls the
module whose parameters `self.models["decoder"].parameters()` gave the optimizer,
and a method returning a dict of their outputs (`outputs = {"topview":
self.models["decoder"](f)}; return outputs, losses`) passes those modules on.  The
optimizer handed to an `optimizer_step` hook of a class that defines
`configure_optimizers` (Lightning's contract) may be any optimizer that method
builds, so its step updates their modules.
An optimizer built in another file (handed in as an argument) counts in one
case: zeroed just before `loss.backward(retain_graph=True)`, stepped, and then
`loss` (the same binding) backpropagated again, where `loss` was computed by
calling a module the function holds (`critic(states)`): its gradients are
then those of `loss`'s graph, so its step updates parameters that graph saved
(a PPO update backpropagating one summed loss once per optimizer).  The later
backward may also go through a value computed before the step that `loss` was
computed from, when that value's computation called every callable `loss`'s
did (`def train(model, optimizer, loader)`: `out = model(x)`, `loss =
F.mse_loss(out, y)` backpropagated and stepped, then `out.abs().mean()`
backpropagated): the parameters the step updates all lie in that value's
graph.""",
    why_bad="""`step()` updates the parameters in place.  The graph built before it
saved the old parameter values (a linear layer keeps its weight to compute
the gradient of its input), so the later `backward()` raises `RuntimeError: one
of the variables needed for gradient computation has been modified by an
inplace operation: [torch.FloatTensor [8, 1]], which is output 0 of
AsStridedBackward0, is at version 2`.  With `retain_graph=True` the first
backward works and only the second fails, far from the cause; before PyTorch
1.5 it silently used the new weights.""",
    example="""d_real = D(x)
d_loss = -d_real.mean()
d_loss.backward(retain_graph=True)
d_opt.step()                 # updates D's weights in place
g_loss = d_real.mean()       # d_real's graph saved D's old weights
g_loss.backward()""",
    use_instead="""d_real = D(x)
d_loss = -d_real.mean()
g_loss = d_real.mean()
d_loss.backward(retain_graph=True)
g_loss.backward()            # every backward through the old graph first
d_opt.step()
# or recompute after the step: g_loss = D(x).mean()""",
    fix_safety="No automatic fix: the right order (or recomputation) depends on the algorithm.",
    known_problems="""A method of the module's own class whose every `return` is built from its
arguments alone (a data loader over them, a cast, rows picked by an index) uses
no layer: data read from it has no graph (`loader = self._dataloader(X)`).
One function is followed, with what the methods of the same object
return (`critic_loss, actor_loss = self.losses(batch)`: the layers each value
was computed from, summaries.py), the attributes its other methods compute,
and what the file's calls pass a top-level function; values passed in by
callers in other files, arguments of methods, attributes that the method
itself or a method of another object sets, and optimizers built in another
file, are unknown, so nothing is claimed about them (but for one loss, or a
value it was computed from, backpropagated on both sides of a step of an
optimizer zeroed just before the first, above; a first loss that also called
a callable the shared value did not, `head(feat)`, stays silent: the
optimizer may hold that callable's parameters only).  An optimizer whose construction names no `.parameters()` is not
tracked.  A module or optimizer called under another name than the one the
optimizer was built with is recognised only through a plain binding in the
same function (`aug, opt_a = self.aug, self.opt_a`, `aug = aug.train()`), or
through a constructor that stores its argument once on the object and builds the
optimizer over the argument (`self.critic = critic`, `Adam(critic.parameters())`:
calls of `self.critic`, not of the object holding it), or through the file's own
calls of the class's constructor that pass a module and an optimizer built over
its parameters (`GANTrainer(g, c, optim.Adam(g.parameters()), c_opt)`, stored
once as `self.G`, `self.g_opt`; also through `super().__init__(**kwargs)` to a
same-file base class; every such call agreeing), not through containers or
other arguments.  A value whose graph an
earlier `backward()` without `retain_graph` already freed is not claimed: a
later backward through it would fail anyway ("backward through the graph a
second time"), and in working code the dependency is not a graph path (a
statistic of the discriminator's output, computed under `no_grad` in a helper,
that tunes the generator's augmentation).  The same holds for a backward's own
run in the previous iteration of a loop: one earlier in the body than the
step, without `retain_graph`, already went through a value bound before the
loop as one graph (a call's result, not a list of graphs read one element per
iteration; or rebound from it, before the backward: `fake =
torch.cat([fake[:n], fake[n:]], 1)`) and freed it, so the next iteration fails
on the freed graph first (ADL019's case).""",
)


def check_scope(checker, scope) -> None:
    """Remember each step with the backward calls after it; optimizers may be
    built later in the file, so the check runs in ``check_file``.

    Each candidate carries a cut: values bound before it were built before the
    step.  After the step in source order the cut is the step itself; in a loop,
    a backward earlier in the body runs again after the step in the next
    iteration, and then only values bound before the loop are old."""
    _summarise_returns(checker, scope)
    if isinstance(scope.function_node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not scope.grad_off and \
            scope.backward_receivers and checker.file.trains:
        checker.notes["ADL003 joined outputs"].append(scope)  # (_check_joined_outputs)
    if scope.top_level and not scope.grad_off and scope.return_values and checker.file.trains:
        checker.notes["ADL003 returning functions"].append(scope)  # (_record_called_parameters)
    if scope.name_calls:
        checker.notes["ADL003 scopes"].append(scope)  # callers of same-file functions
    # a same-class method called here that steps (or backpropagates through its
    # arguments) counts as a step (a backward) at the call: ``helper_steps``
    receivers = scope.backward_receivers + scope.helper_backward_receivers
    steps = [(seq, node, optimizer, None) for seq, node, optimizer in scope.steps] + scope.helper_steps
    # `model.load_state_dict(...)`: the module's parameters written in place, like a step
    steps += [(seq, node, _LOADED + module, None) for seq, node, module in scope.parameter_loads]
    for seq, node, optimizer, call in steps:
        later = [(b, bnode, recv, seq) for b, bnode, recv in receivers
                 if b > seq and not scope.exclusive(seq, b) and scope.reaches(seq, b)]
        loops = [(start, end) for start, end in scope.finished_loops if start < seq < end]
        if loops:
            start, end = max(loops)
            later += [(b, bnode, recv, start) for b, bnode, recv in receivers
                      if start < b < seq and not scope.exclusive(seq, b)]
        if later:
            checker.notes["ADL003"].append((scope, seq, node, optimizer, later, call))


def check_file(checker) -> None:
    """ADL003, once the whole file is read (optimizers are often built after the
    functions that step them): a `step()` updates parameters that a graph built
    before it saved, and a later `backward()` goes through that graph."""
    if checker.notes["ADL003"]:
        module_summaries(checker)
        for scope in checker.notes["ADL003 returning functions"]:
            _record_called_parameters(checker, scope)
    reported = set()  # a method's step reached by several calls of it is reported once
    for scope, seq, node, optimizer, later, call in checker.notes["ADL003"]:
        if id(node) in reported:
            continue
        if optimizer.startswith(_LOADED):  # the module whose parameters are written
            owners = {_held_name(checker, scope, optimizer[len(_LOADED):], seq)}
        else:
            owners = checker.training.optimizers.get(optimizer) or \
                checker.training.optimizers.get(_held_name(checker, scope, optimizer, seq)) or \
                _hook_optimizer_owners(checker, scope, optimizer) or \
                _constructor_owners(checker, scope, optimizer, seq)
            # a parameter of the function: the module its callers build it over, under the
            # function's own name for it (the name-based owners above come from whichever
            # function of the file binds an optimizer of that name)
            handed = _argument_owners(checker, scope, optimizer)
            if handed:
                owners = set(owners or ()) | handed
        index = None  # the loop variable naming the stepped element (`optimizerDs[i]`)
        if not owners and isinstance(node.func, ast.Attribute) and \
                N.indexed_element(node.func.value, checker.text) is not None:
            base, index = N.indexed_element(node.func.value, checker.text)
            owners = {o.replace(N.ELEMENT, f"[{index}]")
                      for o in checker.training.optimizers.get(base + N.ELEMENT, ())}
        if owners and _handed_optimizer(node) and optimizer not in checker.training.optimizer_instances:
            # (`optimizer.first_step()` of a same-file Optimizer subclass is a step itself)
            owners = _WholeModules(owners)
        if not owners:
            # whose parameters it steps is unknown (built in another file): only the
            # same loss backpropagated on both sides of the step is a claim
            _same_loss_again(checker, scope, seq, node, optimizer, later, call)
            continue
        for b, bnode, recv, cut in later:
            hit = _old_graph(checker, scope, recv, b, cut, owners, seq, _freeing_loop(scope, b, bnode, seq, cut)) or \
                _old_attribute(checker, scope, recv, b, cut, owners, seq)
            if hit is not None and _steps_other_positions(checker, scope, seq, optimizer, hit, owners):
                continue  # the step changes only parameters another position of the result reached
            if hit is not None and index is not None and not _same_element(scope, index, hit[1], node):
                continue  # `discriminators[i]` may be another element than the stepped one
            if hit is not None and _part_not_shown_on_positions(checker, scope, seq, optimizer, hit, owners):
                continue  # nothing shows that the old graph's positions went through the stepped part
            if hit is not None:
                name, value, module = hit
                backward = f"`backward()` on line {bnode.lineno}" if not _helper_call(bnode) else \
                    f"the backward pass of `{checker.text(bnode.func)}()` (line {bnode.lineno})"
                via = f" (run by `{checker.text(call.func)}()` on line {call.lineno})" if call is not None else ""
                related = [(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                            f"`{name}` computed here, before the step"),
                           (bnode.lineno, checker.col(bnode.lineno, bnode.col_offset), 0,
                            "backward through the old graph")]
                if call is not None:
                    related.append((call.lineno, checker.col(call.lineno, call.col_offset), 0,
                                    "the step runs in this call"))
                what = "copies into" if optimizer.startswith(_LOADED) else "updates"
                checker.report(
                    "ADL003", node,
                    f"`{checker.text(node.func)}()`{via} {what} the parameters of `{module}` in place, "
                    f"but `{name}` (line {value.lineno}) was computed from them before this "
                    f"{'write' if optimizer.startswith(_LOADED) else 'step'} and "
                    f"{backward}"
                    f"{' (in the next iteration of the loop)' if b < seq else ''} goes through its "
                    f"graph, which saved the "
                    f"old values; backward() will fail (modified by an inplace operation)",
                    related=related)
                reported.add(id(node))
                if optimizer in checker.training.optimizer_instances:
                    # a step of a same-file Optimizer subclass, called from the training code:
                    # the file defining an optimizer does not make this claim moot (checker.py)
                    checker.notes["ADL003 optimizer method steps"].append(node.lineno)
                break
    _check_joined_outputs(checker, reported)


def _check_joined_outputs(checker, reported) -> None:
    """Across iterations of a loop over a list of objects (the multi-agent
    learner's idiom, ``joined_outputs.py``): every object's module output joined
    before the loop, each iteration backpropagating through the joined value and
    then writing its own object's module in place; the next iteration's backward
    goes through the module an earlier one wrote."""
    for scope in checker.notes["ADL003 joined outputs"]:
        for crossing in crossings(checker.tree, checker.filename, scope.function_node, checker.text):
            writer, backward = crossing.writer, crossing.backward
            if id(writer) in reported:
                continue
            reported.add(id(writer))
            module = f"{crossing.element}.{crossing.attribute}"
            checker.report(
                "ADL003", writer,
                f"`{checker.text(writer.func)}()` writes the parameters of `{module}` in place in "
                f"every iteration of the loop, but `{crossing.joined}` (line "
                f"{crossing.joined_statement.lineno}) was computed before the loop from every "
                f"element's `{crossing.attribute}`, and `backward()` on line {backward.lineno} in a later "
                f"iteration goes through its graph, which saved the old values of a module an earlier "
                f"iteration wrote; backward() will fail (modified by an inplace operation)",
                related=[(crossing.joined_statement.lineno,
                          checker.col(crossing.joined_statement.lineno, crossing.joined_statement.col_offset), 0,
                          f"`{crossing.joined}` computed here, before the loop"),
                         (backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                          "backward through the old graph in the next iteration")])


def _same_element(scope, index: str, value, step) -> bool:
    """Whether ``value`` (computed by calling `discriminators[i]`) and ``step``
    (`optimizerDs[i].step()`) name the same element: both lie in one `for i in ...`
    loop of the function, the value before the step in the body, and nothing else in
    that loop binds `i` (an assignment, a nested loop's or a comprehension's target),
    so one iteration computes the value and steps the element."""
    function = scope.function_node
    if function is None:
        return False
    for loop in ast.walk(function):
        if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name)
                and loop.target.id == index):
            continue
        inside = {id(n) for statement in loop.body for n in ast.walk(statement)}
        if id(step) not in inside or id(value) not in inside or \
                (value.lineno, value.col_offset) > (step.lineno, step.col_offset):
            continue
        rebinds = [n for statement in loop.body for n in ast.walk(statement)
                   if isinstance(n, ast.Name) and n.id == index and isinstance(n.ctx, ast.Store)]
        return not rebinds
    return False


def _constructor_owners(checker, scope, optimizer: str, seq: int) -> set:
    """An optimizer held on `self` that the file's code built over a module it passed
    to the same constructor call (`GANTrainer(g, c, Adam(g.parameters()), c_opt)`,
    stored as `self.g_opt`, `self.G`): its step updates that module (constructor_optimizers.py)."""
    held = _held_name(checker, scope, optimizer, seq)
    if scope.owner_class is None or not held.startswith("self.") or held.count(".") != 1:
        return set()
    return constructor_optimizer_owners(checker, scope.owner_class, held[len("self."):])


def _argument_owners(checker, scope, optimizer: str) -> set:
    """An optimizer that a top-level function receives as a parameter, when every call
    of that function in the file passes, for it, an optimizer built over
    `x.parameters()` (inline, or a name its calling function assigns once) and passes
    the same `x` for one same parameter of the function: `train(policy, loader,
    torch.optim.Adam(policy.parameters()), state)` for `def train(model, loader,
    optimizer, state)`.  The step then updates that parameter's module (`{"model"}`);
    empty when a call disagrees, unpacks `*args` / `**kwargs`, or nothing calls it."""
    function = scope.function
    if function is None or function not in checker.tree.body or optimizer not in scope.parameters \
            or function.args.vararg or function.args.kwarg:
        return set()
    positional = [a.arg for a in function.args.posonlyargs + function.args.args]
    names = positional + [a.arg for a in function.args.kwonlyargs]
    if optimizer not in names or sum(
            isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and d.name == function.name
            for d in checker.tree.body) != 1:
        return set()
    found = None
    calls = 0
    for caller in [checker.tree] + [d for d in ast.walk(checker.tree)
                                    if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        body = caller.body
        once = {}  # names the caller assigns exactly once -> value
        counts = {}
        for node in own_nodes(body):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            counts[n.id] = counts.get(n.id, 0) + 1
                            if isinstance(node, ast.Assign):
                                once[n.id] = node.value
        for call in own_nodes(body):
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) \
                    or call.func.id != function.name:
                continue
            calls += 1
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return set()
            bound = dict(zip(positional, call.args))
            bound.update({k.arg: k.value for k in call.keywords})
            built = bound.get(optimizer)
            if isinstance(built, ast.Name) and counts.get(built.id) == 1:
                built = once.get(built.id)
            if not isinstance(built, ast.Call) or not _builds_optimizer(checker, built) or not built.args:
                return set()
            over = built.args[0]
            if not (isinstance(over, ast.Call) and isinstance(over.func, ast.Attribute)
                    and over.func.attr == "parameters" and isinstance(over.func.value, ast.Name)):
                return set()
            module = over.func.value.id
            takers = [p for p, v in bound.items() if p != optimizer and isinstance(v, ast.Name) and v.id == module]
            if len(takers) != 1 or (found is not None and found != takers[0]):
                return set()
            found = takers[0]
    if not calls or found is None or len(scope.binds.get(found, ())) > 1:
        return set()
    return {found}


# Lightning's hooks that are handed one of the optimizers `configure_optimizers` returns
_OPTIMIZER_HOOKS = frozenset({"optimizer_step"})


def _hook_optimizer_owners(checker, scope, optimizer: str) -> set:
    """The modules whose parameters an optimizer handed to a Lightning hook may hold:
    `def optimizer_step(self, epoch, batch_idx, optimizer, ...)` of a class that defines
    `configure_optimizers` is called with each optimizer that method builds, so
    `optimizer.step()` there updates the modules of each of them
    (`torch.optim.Adam(self.discriminator.parameters())`)."""
    if scope.name not in _OPTIMIZER_HOOKS or scope.owner_class is None or optimizer not in scope.parameters:
        return set()
    owners = set()
    for cls in checker.tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name != scope.owner_class:
            continue
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef) or method.name != "configure_optimizers":
                continue
            for call in ast.walk(method):
                if isinstance(call, ast.Call) and _builds_optimizer(checker, call):
                    owners |= {checker.text(n.func.value) for n in ast.walk(call)
                               if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                               and n.func.attr in ("parameters", "named_parameters")
                               and isinstance(n.func.value, (ast.Name, ast.Attribute))}
    return owners


def _builds_optimizer(checker, call) -> bool:
    q = checker.qualname(call.func) or ""
    short = call.func.attr if isinstance(call.func, ast.Attribute) else \
        call.func.id if isinstance(call.func, ast.Name) else ""
    return q.startswith("torch.optim.") and short[:1].isupper() or short in N.OPTIMIZER_CLASSES


# marks a write of a module's parameters (Scope.parameter_loads) among the steps
_LOADED = "load_state_dict of "


def on_attribute_assign(checker, target, value, stmt) -> None:
    """`self.fake = self.gen(z)` in a method: what each attribute of an object is
    given, and where (``_old_attribute`` reads it in another method)."""
    scope = checker.scope
    if not checker.file.trains or scope.owner_class is None or not isinstance(target.value, ast.Name) \
            or target.value.id != "self" or isinstance(value, ast.Constant):
        return  # `self.fake = None` in `__init__`: no value the object computes
    checker.notes["ADL003 attributes"].append(
        (scope.owner_class, target.attr, scope, checker.seq + 1, None if scope.grad_off else value))


def on_method_call(checker, call, func) -> None:
    """`self.forward(x)`: the object's own methods each method calls, and when; and
    `log_probs.append(m.log_prob(a))`: what a list is filled with.  Only in a file that
    runs backward passes (no other has an ADL003 finding)."""
    scope = checker.scope
    if not checker.file.trains:
        return
    if scope.owner_class is not None and isinstance(func.value, ast.Name) and func.value.id == "self":
        checker.notes["ADL003 self calls"].append((scope, checker.seq, func.attr))
        if not scope.grad_off:  # `self.update_all_parameters(qf1_loss, ...)`: _from_callers
            checker.notes["ADL003 self call nodes"].append((scope, checker.seq, call))
    elif func.attr in ("append", "insert") and call.args and isinstance(func.value, ast.Name) \
            and not scope.grad_off:
        checker.notes["ADL003 appends"].append((scope, checker.seq, func.value.id, call.args[-1]))


def _appended(checker, scope, name: str, after: int, before: int) -> list:
    """``[(seq, value)]`` appended to the list ``name`` between two seqs of ``scope``."""
    return [(seq, value) for where, seq, appended, value in checker.notes["ADL003 appends"]
            if where is scope and appended == name and after < seq < before]


def _from_callers(checker, scope, name, owners):
    """``name`` is a parameter of a top-level function, still the caller's value, and
    every call of the function in the file passes there a value computed from a
    module the optimizer updates (`finish_episode(states, log_probs)` with
    `log_probs.append(Categorical(policy(s)).log_prob(a))`): ``(argument, module)``
    of the first call.  The calls must be all the file's mentions of the function."""
    method = not scope.top_level and scope.owner_class is not None and scope.function is not None \
        and any(node is scope.function for node in _class_methods(checker, scope.owner_class))
    if not (scope.top_level or method) or scope.arguments is None or scope.name in checker.notes["ADL003 asking"]:
        return None  # (a function that calls itself: its callers are asked once)
    args = scope.arguments
    positional = [a.arg for a in args.posonlyargs + args.args][1 if method else 0:]
    if name not in positional and name not in {a.arg for a in args.kwonlyargs}:
        return None
    if method:
        # a method is the caller's through `self.<method>(...)` in methods of its class,
        # and those must be all the file's mentions of the method's name
        calls = [(where, seq, call) for where, seq, call in checker.notes["ADL003 self call nodes"]
                 if where.owner_class == scope.owner_class and call.func.attr == scope.name]
        if not calls or len(calls) != _attribute_mentions(checker, scope.name):
            return None
    else:
        calls = [(where, seq, call) for where in _scopes_calling(checker, scope.name)
                 for seq, call in where.name_calls if call.func.id == scope.name]
        if not calls or len(calls) != _mentions(checker, scope.name):
            return None
    found = None
    checker.notes["ADL003 asking"].append(scope.name)
    try:
        for where, seq, call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            arg = next((k.value for k in call.keywords if k.arg == name), None)
            if arg is None and name in positional and positional.index(name) < len(call.args):
                arg = call.args[positional.index(name)]
            hit = _module_before(checker, where, name, arg, seq, owners, seq) if arg is not None else None
            if hit is None:
                return None
            found = found or (arg, hit[0])
    finally:
        checker.notes["ADL003 asking"].pop()
    return found


def _is_parameter_binding(scope, name, entry) -> bool:
    """``entry`` is the binding a parameter of ``scope``'s function starts with."""
    return entry[1] is None and name in scope.parameters and scope.binds.get(name, [None])[0] == entry[0] \
        and (name, entry[0]) not in scope.iterated


def _scopes_calling(checker, function: str) -> list:
    """The walked scopes that call ``function`` by name (ADL003 keeps them in its notes)."""
    if "ADL003 callers" not in checker.notes:
        callers = {}
        for where in checker.notes["ADL003 scopes"]:
            for function_name in {call.func.id for _, call in where.name_calls}:
                callers.setdefault(function_name, []).append(where)
        checker.notes["ADL003 callers"] = callers
    return checker.notes["ADL003 callers"].get(function, [])


def _class_methods(checker, cls: str) -> list:
    """The methods defined in the body of the top-level class ``cls``."""
    return [node for c in checker.tree.body if isinstance(c, ast.ClassDef) and c.name == cls
            for node in c.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _attribute_mentions(checker, method: str) -> int:
    """How often the file reads an attribute named ``method`` (`self.update(...)`,
    `agent.update`): a method reached otherwise than through `self` is not counted
    as the file's calls."""
    return sum(1 for n in ast.walk(checker.tree) if isinstance(n, ast.Attribute) and n.attr == method
               and isinstance(n.ctx, ast.Load))


def _mentions(checker, function: str) -> int:
    """How often the file reads the name ``function``."""
    return sum(1 for n in ast.walk(checker.tree) if isinstance(n, ast.Name) and n.id == function
               and isinstance(n.ctx, ast.Load))


def _old_attribute(checker, scope, recv, at, cut, owners, step):
    """The backward at ``at`` goes through an attribute of the object that another
    of its methods computed from a module the optimizer updates: `self.sketch =
    self.sketch_gen(sk)` in `forward`, then, in `backward`, `opt_gen.step()` and
    a loss on `self.disc(self.sketch)` backpropagated (r255).  The method read
    gives the attribute no value itself, and calls no method that does (directly
    or through other methods) between the cut and the backward, so the value is
    the one computed before it ran.  Every value the class gives the attribute
    (but constants such as `None`) must have been computed from that module,
    with gradients on; a backward that frees the attribute's graph in the method
    leaves it unclaimed (that read would fail first, "backward through the graph
    a second time")."""
    attributes = []
    _reads_attributes(checker, scope, recv, at, attributes)
    if not attributes:
        return None
    assigned = {}  # attribute -> [(scope, seq, value)] in this class
    for owner, attr, where, seq, value in checker.notes["ADL003 attributes"]:
        if owner == scope.owner_class and attr in attributes:
            assigned.setdefault(attr, []).append((where, seq, value))
    for attr in dict.fromkeys(attributes):
        values = assigned.get(attr)
        if not values or any(where is scope or value is None for where, _, value in values):
            continue
        setters = _methods_setting(checker, scope.owner_class, {where.name for where, _, _ in values})
        if any(where is scope and cut < seq < at and method in setters
               for where, seq, method in checker.notes["ADL003 self calls"]):
            continue  # `self.forward(x)` again after the step: a fresh value
        if _attribute_freed(checker, scope, attr, at, step):
            continue
        common = None
        for where, seq, value in values:
            modules = _modules_of(checker, where, value, seq)
            common = modules if common is None else common & modules
        for module in sorted(common or ()):
            if _owned(module, owners):
                value = values[0][2]
                return f"self.{attr}", value, module
    return None


def _reads_attributes(checker, scope, node, at, attributes) -> None:
    """The attributes of `self` that ``node`` (read at ``at``) was computed from,
    through the function's bindings, into ``attributes``."""
    work, seen = [(node, at)], set()
    while work and len(seen) < 200:
        n, when = work.pop()
        for name in _dependencies(checker, n, scope.module_class, scope.owner_class, attributes)[0]:
            entry = scope.binding(name, when)
            if entry is None or (name, entry[0]) in seen:
                continue
            seen.add((name, entry[0]))
            if entry[1] is not None and not entry[2]:
                work.append((entry[1], entry[0]))


def _methods_setting(checker, owner_class, setters: set) -> set:
    """The methods of ``owner_class`` that call one of ``setters`` (the methods that
    give an attribute its value), directly or through each other, and ``setters``."""
    calls = {}
    for where, _, method in checker.notes["ADL003 self calls"]:
        if where.owner_class == owner_class:
            calls.setdefault(where.name, set()).add(method)
    return set(spread_to_callers(setters, calls))


def _attribute_freed(checker, scope, attr, at, step) -> bool:
    """A backward in the method (or in a same-class method it calls) that frees its
    graph and goes through `self.<attr>`: another one than that at ``at``, or that
    one itself when it runs again in the next iteration of a loop (``at`` before
    the ``step``)."""
    for s, bnode, recv in scope.backward_receivers:
        if (s != at or at < step) and _frees_graph(bnode):
            read = []
            _reads_attributes(checker, scope, recv, s, read)
            if attr in read:
                return True
    return any((s != at or at < step) and attr in attributes and _frees_graph(bnode)
               for s, bnode, attributes in scope.helper_attribute_backwards)


def _same_loss_again(checker, scope, seq, node, optimizer, later, call) -> None:
    """`opt.zero_grad(); loss.backward(retain_graph=True); opt.step(); ...
    loss.backward()` with an optimizer built elsewhere (pg_travel's PPO gets
    `critic_optim` as an argument from `main.py`).  Zeroed just before, the
    optimizer's gradients are those the first backward gave: its step updates, in
    place, parameters of `loss`'s graph, which the retained graph saved, and the
    second backward goes through that same graph.  Claimed only when `loss` was
    computed, with gradients on, by calling something with an input (a layer),
    and the second backward reads the very binding the first one did, or a value
    bound before the step that the first loss was computed from too and whose
    computation called every callable the first loss's did (`out = model(x)`,
    `loss = F.mse_loss(out, y)`, then after the step `out.abs().mean()`): the
    parameters the step updates then all lie in that value's graph."""
    if call is not None or _over_named_tensors(checker, optimizer):
        return
    zeroed = [z for z, text in scope.zero_grad_receivers
              if text == optimizer and z < seq and not scope.exclusive(z, seq) and scope.reaches(z, seq)]
    if not zeroed:
        return
    zero = max(zeroed)
    for b1, b1node, recv1 in scope.backward_receivers:
        if not (zero < b1 < seq) or _frees_graph(b1node) or not isinstance(recv1, ast.Name) \
                or scope.exclusive(b1, seq) or not scope.reaches(b1, seq):
            continue
        entry = scope.binding(recv1.id, b1)
        if entry is None or entry[1] is None or entry[2]:
            continue
        layer = _layer_called(checker, scope, entry[1], entry[0])
        if layer is None:
            continue
        layer, layer_call = layer
        for b2, b2node, recv2, _ in later:
            if b2 <= seq or _freed_between(scope, b1, b2):
                continue
            if _reads_binding(checker, scope, recv2, b2, (recv1.id, entry[0])):
                through = "that same graph,"
            else:
                shared = _shared_value(checker, scope, entry, recv2, b2, seq)
                if shared is None:
                    continue
                through = f"the graph of `{shared}`, part of that graph and computed before the step,"
            checker.report(
                "ADL003", node,
                f"`{checker.text(node.func)}()` updates in place the parameters that "
                f"`{recv1.id}.backward(...)` on line {b1node.lineno} gave gradients to "
                f"(`{optimizer}` was zeroed just before), parameters of `{recv1.id}`'s graph "
                f"(computed with `{layer}` on line {layer_call.lineno}); `backward()` on line "
                f"{b2node.lineno} goes through {through} which saved their old values; "
                f"backward() will fail (modified by an inplace operation)",
                related=[(b1node.lineno, checker.col(b1node.lineno, b1node.col_offset), 0,
                          "first backward, graph retained"),
                         (b2node.lineno, checker.col(b2node.lineno, b2node.col_offset), 0,
                          "backward through the same graph after the step")])
            return


def _shared_value(checker, scope, first, recv2, at, step):
    """A name that the second backward's loss (``recv2`` at ``at``) reads, bound
    before the ``step`` with gradients on, from which the first loss (the binding
    ``first``, a binding entry) was computed too, and whose computation called every
    callable given an input that the first loss's did (so the parameters that
    the first backward gave gradients to are all in its graph): its name."""
    needed = {m for m, _ in _layers_called(checker, scope, first[1], first[0])}
    work, seen = [(recv2, at)], set()
    while work and len(seen) < 200:
        node, when = work.pop()
        for n in _dependencies(checker, node, scope.module_class, scope.owner_class)[0]:
            entry = scope.binding(n, when)
            if entry is None or entry[1] is None or entry[2] or (n, entry[0]) in seen:
                continue
            seen.add((n, entry[0]))
            if entry[0] < step and _reads_binding(checker, scope, first[1], first[0], (n, entry[0])):
                called = {m for m, _ in _layers_called(checker, scope, entry[1], entry[0])}
                if called and needed <= called:
                    return n
            work.append((entry[1], entry[0]))
    return None


def _layer_called(checker, scope, value, at):
    """The first of ``_layers_called``, or None."""
    found = _layers_called(checker, scope, value, at)
    return found[0] if found else None


def _layers_called(checker, scope, value, at) -> list:
    """Each callable given an input called, directly or through earlier bindings, to
    compute ``value``: a name the function holds, not a tensor (`critic(states)`,
    `critic` a parameter or a local), or a layer of `self` (`self.net(x)`); not a
    method of some object (`advants.unsqueeze(1)` on an untyped argument), nor a
    library or same-file function (`torch.min` of a star-imported `torch`): its
    name and the call."""
    work, seen, found = [(value, at)], set(), []
    while work and len(seen) < 200:
        node, when = work.pop(0)  # nearest bindings first
        names, modules = _dependencies(checker, node, scope.module_class, scope.owner_class)
        called = {}
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and (n.args or n.keywords) and (
                    isinstance(n.func, ast.Name) or (isinstance(n.func, ast.Attribute)
                                                     and isinstance(n.func.value, ast.Name)
                                                     and n.func.value.id == "self")):
                spec = checker.modules.called_module(n, scope.owner_class)
                if spec is None or spec.parameterised:  # not `criterion = nn.MSELoss()`
                    called.setdefault(checker.text(n.func), n)
        found += [(m, called[m]) for m in modules if m in called and m not in scope.tensors and (
            m.startswith("self.") or m in scope.parameters or m in scope.binds)]
        for n in names:
            entry = scope.binding(n, when)
            if entry is not None and entry[1] is not None and not entry[2] and (n, entry[0]) not in seen:
                seen.add((n, entry[0]))
                work.append((entry[1], entry[0]))
    # a module handed in (`critic`) or held (`self.net`) before a local callable,
    # which may be a loss object (`criterion = torch.nn.MSELoss()`)
    found.sort(key=lambda hit: 0 if hit[0] in scope.parameters or hit[0].startswith("self.") else 1)
    return found


def _freed_between(scope, first: int, second: int) -> bool:
    """A backward that surely frees its graph runs between the two."""
    return any(first < s < second and _frees_graph(bnode) for s, bnode, _ in scope.backward_receivers)


def _record_called_parameters(checker, scope) -> None:
    """A top-level function whose every `return` gives one value computed, with
    gradients on, by calling one of its parameters as the caller passed it
    (`def evaluate(model, batches): loss = sum(model.loss(b) for b in batches) /
    n; return loss`): a call of it is a call of that argument (``_dependencies``),
    so that `val_loss = evaluate(meta_net, batches)` was computed by `meta_net`.
    Computed once the file is read, only when it steps (``check_file``): the
    functions in source order, so a function's calls of those defined before it
    count."""
    if scope.arguments is None:
        return
    _record_called_parameters_per_element(
        checker, scope, [a.arg for a in scope.arguments.posonlyargs + scope.arguments.args])
    found = checker.notes.get("ADL003 called parameters")
    if found is None:
        found = checker.notes["ADL003 called parameters"] = {}
    if scope.name in found:  # defined twice in the file: which one runs is unknown
        found[scope.name] = ()
        return
    positional = [a.arg for a in scope.arguments.posonlyargs + scope.arguments.args]
    common = None
    for seq, value in scope.return_values:
        if isinstance(value, ast.Tuple):
            common = set()
            break
        called = _parameters_called(checker, scope, value, seq, positional)
        common = called if common is None else common & called
    found[scope.name] = tuple(sorted(positional.index(name) for name in common or ()))


def _record_called_parameters_per_element(checker, scope, positional) -> None:
    """A top-level function whose every `return` is a tuple display of one length
    (`return d_loss, g_loss`): per element, the parameters called, with gradients
    on, to compute it in every return (`def loss_nonsaturating(d, g, x_real)`:
    `g_loss` from `d(g(z))`), so that `d_loss, g_loss = loss_nonsaturating(D, G, x)`
    makes `g_loss` a value computed by `D` and `G` (``_dependencies``).  Any other
    return (a name, a starred element, another length) leaves the function out."""
    per_element = checker.notes.setdefault("ADL003 called parameters per element", {})
    if scope.name in per_element:  # defined twice in the file
        per_element[scope.name] = ()
        return
    common = None
    for seq, value in scope.return_values:
        if not isinstance(value, ast.Tuple) or any(isinstance(e, ast.Starred) for e in value.elts) or \
                (common is not None and len(common) != len(value.elts)):
            per_element[scope.name] = ()
            return
        called = [_parameters_called(checker, scope, e, seq, positional) for e in value.elts]
        common = called if common is None else [a & b for a, b in zip(common, called)]
    per_element[scope.name] = tuple(tuple(sorted(positional.index(n) for n in c)) for c in common or ())


def _parameters_called(checker, scope, value, at, positional) -> set:
    """The parameters of ``scope``'s function, still the caller's values, called (or a
    method of which is called) with an input to compute ``value`` (read at ``at``)."""
    found, work, seen = set(), [(value, at)], set()
    while work and len(seen) < 200:
        node, when = work.pop()
        names, modules = _dependencies(checker, node, scope.module_class, scope.owner_class)
        for module in modules:
            root = module.split(".")[0]
            entry = scope.binding(root, when) if root in positional else None
            if entry is not None and _is_parameter_binding(scope, root, entry):
                found.add(root)
        for name in names:
            entry = scope.binding(name, when)
            if entry is not None and entry[1] is not None and not entry[2] and (name, entry[0]) not in seen:
                seen.add((name, entry[0]))
                work.append((entry[1], entry[0]))
    return found


def _summarise_returns(checker, scope) -> None:
    """Keep a method that returns values, for its summary (``module_summaries``)."""
    if scope.owner_class is not None and not scope.grad_off and scope.return_values \
            and (scope.owner_class, scope.name) in checker.summaries.returns:
        checker.notes["ADL003 returns"].append(scope)


def module_summaries(checker) -> None:
    """A method's summary for its callers (summaries.py): per position of what it
    returns, the layers of its object (`self.<layer>`) the value was computed from,
    through the method's own bindings (`return model_loss, actor_loss`).  Computed
    only when a rule needs one (most files step no optimizer): for the methods
    walked so far."""
    pending = checker.notes["ADL003 returns"]
    while pending:
        scope = pending.pop(0)  # in the order walked: a held module's class is summarised first
        per_return = []
        for seq, value in scope.return_values:
            elts = value.elts if isinstance(value, ast.Tuple) else [value]
            per_return.append([_modules_of(checker, scope, e, seq) for e in elts])
        checker.summaries.record_modules((scope.owner_class, scope.name), per_return)


def _modules_of(checker, scope, value, at) -> frozenset:
    """Every `self.<layer>` called, directly or through earlier bindings, to compute ``value``."""
    found, work, seen = set(), [(value, at)], set()
    positional = [a.arg for a in scope.arguments.posonlyargs + scope.arguments.args][1:] \
        if scope.arguments is not None and scope.owner_class is not None else []
    while work and len(seen) < 200:
        node, when = work.pop()
        names, modules = _dependencies(checker, node, scope.module_class, scope.owner_class)
        found.update(m for m in modules if m.startswith("self.") and _LAYER_PATH.fullmatch(m))
        for n in names:
            entry = scope.binding(n, when)
            if entry is not None and n in positional and _is_parameter_binding(scope, n, entry):
                # computed from what the caller passes there: `_ARGUMENT` + its position
                found.add(f"{_ARGUMENT}{positional.index(n)}")
            if entry is not None and entry[1] is not None and not entry[2] and (n, entry[0]) not in seen:
                seen.add((n, entry[0]))
                work.append((entry[1], entry[0]))
    return frozenset(found)


# in a method's summary, "the value the caller passes at this position" (`self._calc_loss(
# predict_thetas, ...)[2]` is computed from `predict_thetas` too): _dependencies follows it
_ARGUMENT = "argument "


def _summary_modules(modules, call, stack) -> list:
    """The layers of a method's summary (``modules``), its argument entries replaced by
    the call's arguments pushed on ``stack``."""
    layers = []
    for m in sorted(modules):  # a set: sorted, so the module named is the same every run
        if m.startswith(_ARGUMENT):
            position = int(m[len(_ARGUMENT):])
            if position < len(call.args) and not isinstance(call.args[position], ast.Starred):
                stack.append(call.args[position])
        else:
            layers.append(m)
    return layers


# `self.enc.conv`, `self.models["decoder"]` (names.keyed_module): a layer's path
_LAYER_PATH = re.compile(r'[A-Za-z_]\w*(\.[A-Za-z_]\w*|\["[A-Za-z_]\w*"\])*')


class _WholeModules(frozenset):
    """Owners whose calls count only as the module or a part of it, not as a module that
    contains it: the optimizer a helper is handed (`update_params(fraction_optim, ...)`)
    updates `online_net.fraction_net`, and a call of `online_net`'s other method may use
    other parts (``_owned``)."""


class _MethodReceiver(str):
    """The object whose method is called (`self.model` of `self.model.value(obs)`): the
    method may use any part of it, or only some, so it counts as the module or a part
    of it, not as running a part it contains (`self.model.actor`, whose optimizer steps):
    MAPPO's `self.model.value(...)` runs `self.model.critic` only."""


def _owned(module: str, owners) -> str | None:
    """The optimizer's module that ``module`` (a called name) is, contains or is part of
    (a dict's module is part of the dict: `self.models["decoder"]` of `self.models`)."""
    for owner in owners:
        if module == owner or module.startswith((owner + ".", owner + "[")) \
                or (not isinstance(owners, _WholeModules) and not isinstance(owner, N.AttributeAlias)
                    and not isinstance(module, _MethodReceiver)
                    and owner.startswith((module + ".", module + "["))):
            return owner
    return None


def _dependencies(checker, node, cls=None, owner=None, attributes=None):
    """Names read and callables called to compute ``node``'s tensor value: not
    through graph-cutting calls (`.detach()`, `.item()`), `.data`, shape queries
    (`x.size(0)`, `D.output_shape`) or calls with `requires_grad=False`.  In a
    method of the module class ``cls``, its methods that use no layer
    (``checker.modules.data_only_methods_of``) are not callables that use parameters.
    A method of the same class (``owner``) with a summary stands for the layers its
    result was computed from (`self.loss(batch)[1]`: those of its second value).
    The attributes of `self` read as values (`self.sketch`, not `self.disc(...)`)
    are added to ``attributes`` when it is a list."""
    names, modules, stack = [], [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            names.append(n.id)
        elif isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and \
                isinstance(n.slice.value, int) and \
                checker.summaries.modules_of(n.value, owner, n.slice.value) is not None:
            modules.extend(_summary_modules(checker.summaries.modules_of(n.value, owner, n.slice.value),
                                            n.value, stack))
            if checker.summaries.passes_arguments(n.value, owner, n.slice.value):
                stack.extend(n.value.args)
                stack.extend(k.value for k in n.value.keywords)
        elif isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and \
                isinstance(n.slice.value, int) and isinstance(n.value, ast.Call) and \
                isinstance(n.value.func, ast.Name) and \
                0 <= n.slice.value < len((checker.notes.get("ADL003 called parameters per element") or {})
                                         .get(n.value.func.id, ())):
            # `d_loss, g_loss = loss_nonsaturating(D, G, x)`: the element was computed by
            # calling what the caller passes at these positions; the call is read on
            per_element = checker.notes["ADL003 called parameters per element"][n.value.func.id]
            for position in per_element[n.slice.value]:
                arg = n.value.args[position] if position < len(n.value.args) else None
                if isinstance(arg, (ast.Name, ast.Attribute)):
                    modules.append(checker.text(arg))
            stack.append(n.value)
        elif isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and \
                isinstance(n.slice.value, int) and _held_forward_modules(checker, n.value, n.slice.value, owner):
            # `curr_q1, curr_q2 = self.critic(s, a)`: the second value comes from the
            # layers the held module's `forward` used for it (`self.critic.Q2`)
            modules.extend(_held_forward_modules(checker, n.value, n.slice.value, owner))
            stack.extend(n.value.args)
            stack.extend(k.value for k in n.value.keywords)
        elif isinstance(n, ast.Call) and checker.summaries.modules_of(n, owner, None) is not None:
            modules.extend(_summary_modules(checker.summaries.modules_of(n, owner, None), n, stack))
            if checker.summaries.passes_arguments(n, owner, None):
                stack.extend(n.args)
                stack.extend(k.value for k in n.keywords)
        elif isinstance(n, ast.Call):
            func = n.func
            if any(k.arg == "requires_grad" for k in n.keywords) or \
                    (isinstance(func, ast.Name) and func.id in checker.training.grad_free_functions):
                continue
            if N.keyed_module(func, checker.text) is not None:
                modules.append(N.keyed_module(func, checker.text))  # `self.models["decoder"](x)`
            if N.indexed_element(func, checker.text) is not None:
                modules.append(checker.text(func))  # `discriminators[i](x)`: an element module
            if isinstance(func, ast.Attribute) and _no_graph_result(n):
                continue  # `old_m.sample()`, `q.argmax(1)`: an action index, no graph
            if isinstance(func, ast.Attribute) and func.attr in _CASTS and not n.keywords and \
                    all(isinstance(a, (ast.Constant, ast.Attribute, ast.Name)) for a in n.args):
                # `action.double()`, `out.to(device)`: a tensor's cast keeps its graph (a
                # module's returns the module, whose calls are read where they are made)
                stack.append(func.value)
                continue
            if isinstance(func, ast.Attribute) and (func.attr in N.GRAD_CUTTING_METHODS
                                                    or (func.attr in N.NOT_TENSOR_METHODS and
                                                        func.attr not in N.GRAPH_CARRYING_TUPLE_METHODS)
                                                    or func.attr in N.MODULE_METHODS):
                continue
            if isinstance(func, ast.Name):
                if func.id not in checker.aliases and not _returns_leaves(checker, func):
                    modules.append(func.id)
                # `evaluate(meta_net, batches)`: a same-file function that calls its argument
                for position in (checker.notes.get("ADL003 called parameters") or {}).get(func.id, ()):
                    if position < len(n.args) and isinstance(n.args[position], (ast.Name, ast.Attribute)):
                        modules.append(checker.text(n.args[position]))
            elif isinstance(func, ast.Attribute) and checker.qualname(func) is None:
                on_self = isinstance(func.value, ast.Name) and func.value.id == "self"
                # `model.get_criterion()`: a method given no input is no evidence that
                # it computes anything from the parameters (it returns a loss object)
                given_input = bool(n.args or n.keywords) or on_self
                if given_input and not on_self and _layer_free(checker, func):
                    stack.extend(n.args)  # `self.critic.build_inputs(batch)`: sizes only
                    stack.extend(k.value for k in n.keywords)
                    continue
                if given_input and not (on_self and func.attr in checker.modules.data_only_methods_of(cls)):
                    modules.append(checker.text(func))  # not `self.make_batch()`: no layer
                if not on_self:
                    if given_input and isinstance(func.value, (ast.Name, ast.Attribute)):
                        modules.append(_MethodReceiver(checker.text(func.value)))
                    stack.append(func.value)
            stack.extend(n.args)
            stack.extend(k.value for k in n.keywords)
        elif isinstance(n, ast.Subscript) and _selected_indices(n.value, n.slice):
            continue  # `q.max(1)[1]`: the positions of the maxima, no graph
        elif isinstance(n, ast.Attribute):
            if (n.attr in N.TENSOR_ATTRIBUTES and n.attr != "data") or n.attr == "values":
                stack.append(n.value)
            elif attributes is not None and isinstance(n.value, ast.Name) and n.value.id == "self":
                attributes.append(n.attr)
        elif isinstance(n, ast.AugAssign):
            stack += [n.target, n.value]
        elif isinstance(n, (ast.Lambda, ast.FunctionDef, ast.Compare, ast.BoolOp)):
            continue
        else:
            stack.extend(ast.iter_child_nodes(n))
    return names, modules


def _held_forward_modules(checker, call, position: int, owner) -> list:
    """The layers of the held module that ``call`` calls (`self.critic(s, a)`, a
    same-file module class) from which its `forward` computed the tuple element
    ``position``, named through the holder (`self.critic.Q2`); [] when unknown."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return []
    spec = checker.modules.called_module(call, owner)
    if spec is None or spec.kind not in checker.modules.module_classes:
        return _project_forward_modules(checker, call, position, owner)
    entry = checker.summaries.modules.get((spec.kind, "forward"))
    returns = checker.summaries.returns.get((spec.kind, "forward"))
    if entry is None or returns is None or returns[1] is not True or position >= len(entry) \
            or len(entry) != len(returns[0]) or returns[0][position] in (None, "tensor"):
        return []
    holder = checker.text(call.func)
    return sorted(holder + m[len("self"):] for m in entry[position] if m.startswith("self."))


def _project_forward_modules(checker, call, position: int, owner) -> list:
    """As ``_held_forward_modules`` for a held module whose class another file of the
    project defines (`self.critic = QNetwork(...).to(device)` in `__init__`, `from
    model import QNetwork`): its `forward` read in that file (project_forwards.py);
    [] when unknown."""
    holder = call.func
    if not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name)
            and holder.value.id == "self" and owner):
        return []
    built = _built_once_in_init(checker, owner, holder.attr)
    qualname = checker.qualname(built.func) if built is not None else None
    if not qualname or "." not in qualname or qualname.startswith("torch."):
        return []
    layers = forward_position_layers(qualname, checker.filename)
    if layers is None or position >= len(layers):
        return []
    return sorted(f"{checker.text(holder)}.{attr}" for attr in layers[position])


def _built_once_in_init(checker, owner: str, attr: str):
    """The constructor call that `__init__` of the class ``owner`` binds `self.<attr>`
    to (through `.to(device)` and the like), when that is the only binding of
    `self.<attr>` in the file's classes of that name; else None."""
    classes = [c for c in checker.class_nodes if c.name == owner]
    if len(classes) != 1:
        return None
    found = []
    for function in classes[0].body:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) \
                            and t.value.id == "self" and isinstance(t.ctx, ast.Store):
                        found.append((function, node, target))
    if len(found) != 1:
        return None
    function, node, target = found[0]
    if function.name != "__init__" or not isinstance(node, ast.Assign) or node.targets != [target]:
        return None
    value = node.value
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in RETURN_THE_MODULE:
        value = value.func.value
    return value if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) else None


def _no_graph_result(call) -> bool:
    """A method call whose result has no graph: an integer result (`argmax`, `long`),
    or `dist.sample()` of a distribution held in a local name (sampled under
    `no_grad`; `rsample()` keeps the graph, and `self.policy.sample(state)` may be a
    network's own method)."""
    func = call.func
    if func.attr in N.INTEGER_RESULT_METHODS:
        return True
    return func.attr == "sample" and not call.args and not call.keywords and isinstance(func.value, ast.Name) \
        and func.value.id != "self"


def _layer_free(checker, func: ast.Attribute) -> bool:
    """``func`` is a method of a held module whose class the repository defines and
    whose code uses none of its layers or parameters (``held_methods.py``)."""
    if not isinstance(func.value, (ast.Name, ast.Attribute)) or func.attr in N.MODULE_METHODS:
        return False
    key = (checker.text(func.value), func.attr)
    if key not in checker.layer_free_methods:
        checker.layer_free_methods[key] = uses_no_layer(func.value, func.attr, checker.tree,
                                                        checker.filename)
    return checker.layer_free_methods[key]


def _returns_leaves(checker, func: ast.Name) -> bool:
    """``func()`` calls a module whose class, found in the repository, returns its
    own parameters from `forward` (``held_methods.py``): leaves, no graph to go
    stale when they are stepped."""
    key = ("returns its parameters", func.id)
    if key not in checker.layer_free_methods:
        checker.layer_free_methods[key] = returns_own_parameters(func, checker.tree, checker.filename)
    return checker.layer_free_methods[key]


def _selected_indices(value, index) -> bool:
    """``x.max(1)[1]`` / ``torch.sort(x)[1]``: element 1 of a value-selecting
    reduction, the index tensor."""
    return isinstance(index, ast.Constant) and index.value == 1 and isinstance(value, ast.Call) \
        and isinstance(value.func, ast.Attribute) and value.func.attr in N.VALUE_SELECTING_METHODS


def _old_graph(checker, scope, recv, at, step, owners, step_seq, freeing_loop=None):
    """Follow what the backward's receiver was computed from, back to a value bound
    before the step (``step``: the cut) whose computation called a module the
    optimizer stepped at ``step_seq`` updates.  ``freeing_loop``: the loop's
    (start, end) when the backward runs again after the step in the next
    iteration and frees its graph (``_freed_by_its_last_run``)."""
    names, _ = _dependencies(checker, recv, scope.module_class, scope.owner_class)
    work, seen = [(n, at) for n in names], set()
    while work and len(seen) < 200:
        name, when = work.pop()
        entry = scope.binding(name, when)
        if entry is None or (name, entry[0]) in seen:
            continue
        seen.add((name, entry[0]))
        bseq, value, grad_off = entry
        if bseq < step and _cut_in_place(scope, name, bseq, at, step_seq):
            continue
        value = _value_of(scope, name, entry, checker)
        if bseq < step and _is_parameter_binding(scope, name, entry) and not _owned(name, owners):
            given = _from_callers(checker, scope, name, owners)
            if given is not None and not _freed(checker, scope, (name, bseq), at):
                return name, given[0], given[1]
            # a parameter carried through the loop (`def fit(net, opt, batches, hidden)`
            # with `logits, hidden = net(tokens, hidden)` in the loop): the next
            # iteration reads the loop's binding, as for a local bound before the loop
            carried = _carried(checker, scope, name, step, step_seq, owners) if at < step_seq else None
            if carried is not None:
                return carried
            continue
        if value is None or grad_off or _owned(name, owners):
            continue
        if bseq < step:
            hit = _module_before(checker, scope, name, value, bseq, owners, step_seq)
            if hit is not None and not _freed(checker, scope, hit[1], at) and \
                    not _freed_by_its_last_run(checker, scope, name, entry[1], when, recv, at, freeing_loop):
                if isinstance(value, (ast.List, ast.Tuple)) and not value.elts:  # show the append
                    value = next((v for q, v in _appended(checker, scope, name, bseq, step_seq)
                                  if q == hit[1][1]), value)
                return name, value, hit[0]
            carried = _carried(checker, scope, name, step, step_seq, owners) if at < step_seq else None
            if carried is not None:
                return carried
        else:
            work += [(n, bseq) for n in _dependencies(checker, value, scope.module_class, scope.owner_class)[0]]
    return None


def _cut_in_place(scope, name, bseq, at, step_seq) -> bool:
    """The value bound to ``name`` at ``bseq``, before the step, is cut from its graph
    by `name.detach_()` before the backward at ``at`` reads it after the step: a cut of
    that very binding (no re-binding of ``name`` between them) that runs whenever the
    step at ``step_seq`` runs (same block of the same loop body, no branch between),
    and, for a backward later in the same iteration than the step, before it.  A
    backward claimed in the next iteration comes after the whole body, cut included."""
    for d in scope.detached_in_place.get(name, ()):
        if d <= bseq or scope.bound_between(name, bseq, d):
            continue
        if scope.run_together(min(d, step_seq), max(d, step_seq)) and (at < step_seq or d < at):
            return True
    return False


def _freeing_loop(scope, b: int, bnode, step_seq: int, cut: int):
    """The loop's (start, end) when the backward at ``b`` is claimed in the next
    iteration (earlier in the body than the step at ``step_seq``; ``cut``: the
    loop's start) and surely frees its graph; None otherwise (a same-class
    method that backpropagates: whether it retains is not known here)."""
    if b > step_seq or _helper_call(bnode) or not _frees_graph(bnode):
        return None
    end = next((e for s, e in scope.finished_loops if s == cut), None)
    return (cut, end) if end is not None else None


def _freed_by_its_last_run(checker, scope, name, value, when, recv, at, freeing_loop) -> bool:
    """The value of ``name`` read at ``when`` (bound before the loop to
    ``value``) is one that the backward at ``at`` went through in the previous
    iteration too, and that run freed it (``freeing_loop`` is set only for a
    backward without `retain_graph`): the next run fails on the freed graph
    ("backward through the graph a second time", ADL019's case) before the
    step could matter.
    The value must be one graph, whatever part of it the next iteration reads:
    a call's result (`fake = G(z)`; `fake[t]` is a view of it), not a container
    whose elements are separate graphs (`[model(x) for x in xs]`, `list(...)`,
    `zip(...)`, a `for` target, a parameter: the next iteration may read
    another element, built before the step and never freed).  And the next
    iteration reads the binding before the loop again, or one the loop body
    makes from ``when`` on; each of those must lie before the backward and on
    its graph (`fake = torch.cat([fake[:n], fake[n:]], 1)` in the body, then a
    loss on `fake` backpropagated).  One made after the backward (`h =
    model(x)` between `loss.backward()` and `opt.step()`) is a graph the
    backward never freed, built before the step: the claim stays."""
    if freeing_loop is None or not isinstance(value, ast.Call) or \
            isinstance(value.func, ast.Name) and value.func.id in _CONTAINER_BUILDERS:
        return False
    start, end = freeing_loop
    rebound = [s for s in scope.binds.get(name, ()) if start < s < end and s >= when]
    return all(s < at and _reads_binding(checker, scope, recv, at, (name, s)) for s in rebound)


# Builtins whose result holds several values, each possibly a graph of its own.
_CONTAINER_BUILDERS = frozenset("list tuple dict set zip map filter sorted reversed enumerate iter".split())


def _value_of(scope, name, entry, checker=None):
    """What the binding ``entry`` of ``name`` gave it: its value, or for a `for`
    target the iterable its elements come from (`for pred, gold in zip(preds,
    golds)`: `preds`).  A name unpacked from a call of a same-file function that
    returns a tuple display (`d_loss, g_loss = losses(d, g, x)`) gets its element,
    `losses(d, g, x)[1]`, so that only what that element was computed from is
    followed (``_record_called_parameters_per_element``)."""
    if entry[1] is not None:
        if checker is not None and isinstance(entry[1], ast.Call) and isinstance(entry[1].func, ast.Name) \
                and (checker.notes.get("ADL003 called parameters per element") or {}).get(entry[1].func.id):
            return _unpacked_element(checker, name, entry[1])
        return entry[1]
    return scope.iterated.get((name, entry[0]))


def _unpacked_element(checker, name, call):
    """``call[i]`` when ``call`` is the value of an assignment to a flat tuple or list
    of names whose i-th is ``name`` (no starred target); ``call`` otherwise."""
    targets = checker.notes.get("ADL003 unpacked calls")
    if targets is None:
        targets = checker.notes["ADL003 unpacked calls"] = {}
        for node in ast.walk(checker.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], (ast.Tuple, ast.List)) and isinstance(node.value, ast.Call) and \
                    all(isinstance(e, ast.Name) for e in node.targets[0].elts):
                targets[id(node.value)] = (node.value, [e.id for e in node.targets[0].elts], {})
    found = targets.get(id(call))
    if found is None or found[0] is not call or found[1].count(name) != 1:
        return call
    i = found[1].index(name)
    if i not in found[2]:
        found[2][i] = ast.copy_location(ast.Subscript(value=call, slice=ast.Constant(i), ctx=ast.Load()), call)
    return found[2][i]


def _carried(checker, scope, name, start, step_seq, owners):
    """The next iteration's read of ``name`` (bound before the loop that starts at
    ``start``) sees the one binding of it in the loop body, made before the step:
    `output, state = model(X, state)`, without `state = state.detach()` or
    `state.detach_()`.  Its
    graph is old in the next iteration when it called a module the optimizer
    updates, and still there when every backward pass in the loop retains its
    graph (one that frees it fails first, "backward through the graph a second
    time": ADL019's case)."""
    end = next((e for s, e in scope.finished_loops if s == start), None)
    body = [b for b in scope.binds.get(name, ()) if start < b < (end or start)]
    if end is None or len(body) != 1 or body[0] > step_seq:
        return None
    if any(start < d < end for d in scope.detached_in_place.get(name, ())):
        return None  # `state.detach_()` cuts it in place
    if any(start < s < end and _frees_graph(node) for s, node, _ in scope.backward_receivers):
        return None
    entry = next((e for e in scope.bind_values.get(name, ()) if e[0] == body[0]), None)
    if entry is None or entry[1] is None or entry[2]:
        return None
    hit = _module_before(checker, scope, name, entry[1], body[0], owners, step_seq)
    return (name, entry[1], hit[0]) if hit is not None else None


def _module_before(checker, scope, name, value, at, owners, step_seq):
    """An owner module called (directly or through earlier bindings) to compute
    ``value``, with the binding ``(name, seq)`` whose value calls it; not a module
    whose name was bound to another object between that call and the step."""
    work, seen = [(value, at, name)], set()
    if isinstance(value, (ast.List, ast.Tuple)) and not value.elts:
        # the value read is an element of a list bound empty and filled before the step
        # (`outs = []`, `outs.append((net(x), y))`, then `h, y = outs[i]` in the loop
        # that steps; GNMOT's candidates, r438): each element's graph is old there
        work += [(appended, seq, name) for seq, appended in _appended(checker, scope, name, at, step_seq)]
    while work and len(seen) < 200:
        node, when, bound = work.pop()
        names, modules = _dependencies(checker, node, scope.module_class, scope.owner_class)
        for m in modules:
            held = _held_name(checker, scope, m, when)
            held = _MethodReceiver(held) if isinstance(m, _MethodReceiver) else held
            owner = _owned(m, owners) or _owned(held, owners)
            if owner is not None and not _rebound(scope, m, when, step_seq):
                return m, (bound, when)
        for n in names:
            if _owned(n, owners):
                continue  # the module object itself (`D = D.cuda()`), not a value computed by it
            entry = scope.binding(n, when)
            if entry is not None and _is_parameter_binding(scope, n, entry) and (n, entry[0]) not in seen:
                seen.add((n, entry[0]))
                given = _from_callers(checker, scope, n, owners)
                if given is not None:
                    return given[1], (n, entry[0])
            if entry is not None and _value_of(scope, n, entry, checker) is not None and not entry[2] \
                    and (n, entry[0]) not in seen:
                seen.add((n, entry[0]))
                work.append((_value_of(scope, n, entry, checker), entry[0], n))
                # a list bound empty and filled: `log_probs = []`, `log_probs.append(...)`
                if isinstance(entry[1], (ast.List, ast.Tuple)) and not entry[1].elts:
                    work += [(value, seq, n) for seq, value in _appended(checker, scope, n, entry[0], when)]
    return None


def _held_name(checker, scope, text: str, at: int) -> str:
    """The held object that a local name stands for at ``at``: `classifier,
    opt_c = self.classifier, self.opt_c` makes `classifier(x)` a call of
    `self.classifier` and `opt_c.step()` a step of `self.opt_c`; a module method
    that returns the module (`net = net.train()`, `.to(device)`) keeps it.
    ``text`` itself when its name is bound to anything else."""
    for _ in range(8):
        root, dot, rest = text.partition(".")
        entry = scope.binding(root, at) if root != "self" else None
        if entry is None or entry[1] is None or not isinstance(entry[1], (ast.Name, ast.Attribute, ast.Call)):
            return text
        value = entry[1]
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr in _RETURNS_MODULE:
            value = value.func.value
        if not isinstance(value, (ast.Name, ast.Attribute)) or checker.qualname(value) is not None:
            return text
        text, at = checker.text(value) + dot + rest, entry[0]
    return text


# Casts: on a tensor, a differentiable copy in another dtype or device.
_CASTS = frozenset("double float half bfloat16 cuda cpu to".split())

# Module methods that return the module itself.
_RETURNS_MODULE = frozenset("cuda cpu to train eval half float double bfloat16 requires_grad_".split())


def _rebound(scope, module: str, then: int, step_seq: int) -> bool:
    """The name ``module`` starts with holds another object at the step than when
    it was called at ``then``: `model = LogReg(...)` between `embeds =
    model.get_embedding(...)` and `opt.step()` (the optimizer, built on the new
    `model`, does not update the layers that computed `embeds`).  A rebinding
    that reads the name itself (`model = model.cuda()`, `.to(device)`) keeps
    the same module."""
    root = module.split(".")[0]
    if root == "self":
        return False
    at_call, entry = scope.binding(root, then), scope.binding(root, step_seq)
    while entry is not None and entry != at_call and entry[0] > then and entry[1] is not None:
        if not any(isinstance(n, ast.Name) and n.id == root for n in ast.walk(entry[1])):
            return True  # `model = LogReg(...)`, then perhaps `model = model.to(device)`
        entry = scope.binding(root, entry[0])
    return False


def _freed(checker, scope, binding, at) -> bool:
    """A `backward()` without `retain_graph` through ``binding`` (name, seq) ran
    after it and before the backward at ``at``: that graph is freed, so the later
    backward cannot go through it (it would fail anyway: "Trying to backward
    through the graph a second time").  Code that retains no graph there is
    evidence that the dependency found is not a graph path."""
    name, seq = binding
    for s, bnode, recv in scope.backward_receivers:
        if seq < s < at and _frees_graph(bnode) and not scope.exclusive(seq, s) \
                and not scope.exclusive(s, at) and scope.reaches(s, at) \
                and _reads_binding(checker, scope, recv, s, binding):
            return True
    return False


def _frees_graph(call) -> bool:
    """`loss.backward()` / `torch.autograd.grad(...)` that surely frees its graph:
    no `retain_graph`/`create_graph` (unless a literal False), no positional
    argument that could be one."""
    positional = 1 if isinstance(call.func, ast.Attribute) and call.func.attr == "backward" else 3
    if len(call.args) > positional:
        return False
    for k in call.keywords:
        if k.arg is None:
            return False  # **kwargs may hold retain_graph
        if k.arg in ("retain_graph", "create_graph") and not (
                isinstance(k.value, ast.Constant) and k.value.value in (False, None)):
            return False
    return True


def _reads_binding(checker, scope, node, at, binding) -> bool:
    """``node`` (at seq ``at``) is computed, through earlier bindings, from ``binding``."""
    work, seen = [(node, at)], set()
    while work and len(seen) < 200:
        n, when = work.pop()
        for name in _dependencies(checker, n, scope.module_class, scope.owner_class)[0]:
            entry = scope.binding(name, when)
            if entry is None or (name, entry[0]) in seen:
                continue
            if (name, entry[0]) == binding:
                return True
            seen.add((name, entry[0]))
            if entry[1] is not None and not entry[2]:
                work.append((entry[1], entry[0]))
    return False


def _handed_optimizer(node) -> bool:
    """The step is a call of a helper that steps the optimizer it is handed (the call
    stands for its `optimizer.step()`), not a `step()` itself."""
    return isinstance(node, ast.Call) and not (isinstance(node.func, ast.Attribute) and node.func.attr == "step")


def _helper_call(call) -> bool:
    """A call of a same-class method or same-file function that backpropagates (not
    `x.backward()` itself)."""
    return isinstance(call.func, ast.Name) or (
        isinstance(call.func, ast.Attribute) and call.func.attr not in ("backward", "manual_backward")
        and isinstance(call.func.value, ast.Name) and call.func.value.id == "self")


def _steps_other_positions(checker, scope, seq, optimizer, hit, owners) -> bool:
    """`q1, q2 = critic(s, a)`; `opt.zero_grad(); q1_loss.backward(); opt.step()`;
    then `q2_loss.backward()` (twin critics in one module, Rafael1s's SAC agents):
    `zero_grad()` sets the gradients to `None` (torch >= 2.0) and a step skips a
    parameter whose `.grad` is `None`, so the step changes only the parameters that
    the backward passes between the clear and the step reached.  When those reach the
    stepped module only through one position of a call's unpacked result (`q1`) and
    the old graph only through another (`q2`), and the module's `forward`, read,
    computes the two positions with separate layers (`self.linear1-3` / `self.linear4-6`):
    no claim.  The forward is read in the file, or, for a class of another project
    file bound once to `self.<attr>` in `__init__`, in its own file
    (project_forwards.py); a forward not read keeps the claim.
    A clear with `set_to_none=False`, a backward through the whole result, or through
    the same position, keeps the claim."""
    cleared = _cleared_backwards(scope, seq, optimizer)
    if not cleared:
        return False
    old = _old_graph_positions(checker, scope, seq, hit, owners)
    stepped = set()
    for b, _, recv in cleared:
        stepped |= _owner_positions(checker, scope, [(recv, b, None)], owners)
    if not old or not stepped:
        return False
    for owner, i, call in old:
        for other, j, other_call in stepped:
            if owner != other:
                continue
            if i is None or j is None or i == j:
                return False
            mine = set(_held_forward_modules(checker, call, i, scope.owner_class) or ())
            theirs = set(_held_forward_modules(checker, other_call, j, scope.owner_class) or ())
            if not mine or not theirs or mine & theirs:
                return False  # the forward is not read, or both positions use a layer
    return {o for o, _, _ in old} <= {o for o, _, _ in stepped}



def _old_graph_positions(checker, scope, seq, hit, owners) -> set:
    """(owner, position, call) of each call of a stepped optimizer's module that the old
    graph's value (`hit`'s name, as bound before `seq`) came from; empty when the name's
    binding is not known."""
    name = hit[0]
    entry = scope.binding(name, seq)
    if entry is None or entry[1] is None:
        return set()
    return _owner_positions(checker, scope, [(_value_of(scope, name, entry), entry[0], _position(checker, name, entry[1]))],
                            owners)

def _part_not_shown_on_positions(checker, scope, seq, optimizer, hit, owners) -> bool:
    """`dist, value = self.policy(obs)` with `critic_opt` over `self.policy.critic`
    only, the policy's class not read (a constructor argument, another file):
    `critic_opt.zero_grad(); value_loss.backward(); critic_opt.step()`, then
    `actor_loss.backward()` with `actor_loss` from `dist` (xuance's NPG learner).  The
    optimizer holds a part of the called module, so the old graph saved the part's
    parameters only if the position it came from was computed through that part, and
    an unread `forward` does not say which positions are.  A position is shown to go
    through the part when a backward between the part optimizer's clear and its step
    reached the call through that position alone (the step then changes what that
    backward filled).  No claim when every position of the old graph's calls of the
    part's parent is unshown; a read `forward` is left to `_steps_other_positions`,
    and a call of the part itself, or the whole result, keeps the claim.  So does a
    same-file module class whose `forward` may return that many values: the called
    module may be one (`def ddpg_update(actor_critic, ...)` called with the file's
    `ActorCritic`, whose `q` computes two positions, r73), and its forward is then
    not read here, only possibly the one called."""
    old = _old_graph_positions(checker, scope, seq, hit, owners)
    if not old:
        return False
    shown = set()
    for b, _, recv in _cleared_backwards(scope, seq, optimizer):
        for owner, j, call in _owner_positions(checker, scope, [(recv, b, None)], owners):
            if j is None:
                return False  # a backward through the whole result: every position may be
            shown.add((owner, j, _called_module(checker, scope, call, seq)))
    for owner, i, call in old:
        called = _called_module(checker, scope, call, seq)
        if i is None or called is None or not owner.startswith((called + ".", called + "[")) \
                or _held_forward_modules(checker, call, i, scope.owner_class) or (owner, i, called) in shown \
                or _file_forward_may_return(checker, call):
            return False
    return True


def _file_forward_may_return(checker, call) -> bool:
    """A module class of the file has a `forward` that may give the tuple ``call``'s
    result is unpacked into (every `return` a tuple display of another length rules
    a forward out; an unknown length rules none out)."""
    targets = checker.notes.get("ADL003 positions") or {}
    names = targets.get(id(call))
    for node in ast.walk(checker.tree):
        if not (isinstance(node, ast.ClassDef) and node.name in checker.modules.module_classes):
            continue
        for forward in node.body:
            if not (isinstance(forward, (ast.FunctionDef, ast.AsyncFunctionDef)) and forward.name == "forward"):
                continue
            returns = [r.value for r in own_returns(forward)]
            if names is None or not returns or not all(
                    isinstance(r, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in r.elts)
                    and len(r.elts) != len(names) for r in returns):
                return True
    return False


def _called_module(checker, scope, call, at) -> str | None:
    """The module a call calls (`self.policy` of `self.policy(obs)`, through local names)."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None
    return _held_name(checker, scope, checker.text(call.func), at)


def _cleared_backwards(scope, seq, optimizer) -> list:
    """The backward passes between the optimizer's last `zero_grad()` (to `None`) and
    its step at ``seq``, that clear being after any earlier step of it; [] when there is
    no such clear or a helper's backward runs there."""
    before = max((s for s, _, o in scope.steps if o == optimizer and s < seq), default=-1)
    clears = [s for s, text in scope.zero_grad_receivers if text == optimizer and before < s < seq]
    if not clears:
        return []
    last = max(clears)
    call = scope.zero_grad_calls.get(last)
    if call is None or call.args or any(k.arg == "set_to_none" and not (
            isinstance(k.value, ast.Constant) and k.value.value is True) for k in call.keywords):
        return []  # gradients kept as zeros: a step changes every parameter that ever had one
    if any(last < s < seq for s, _, _ in scope.helper_backward_receivers):
        return []
    return [(b, bnode, recv) for b, bnode, recv in scope.backward_receivers if last < b < seq]


def _position(checker, name, value):
    """``name``'s position in a flat tuple target assigned ``value`` (a call), else None."""
    if not isinstance(value, ast.Call):
        return None
    targets = checker.notes.get("ADL003 positions")
    if targets is None:
        targets = checker.notes["ADL003 positions"] = {}
        for node in ast.walk(checker.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], (ast.Tuple, ast.List)) and isinstance(node.value, ast.Call) and \
                    all(isinstance(e, ast.Name) for e in node.targets[0].elts):
                targets[id(node.value)] = [e.id for e in node.targets[0].elts]
    names = targets.get(id(value))
    return names.index(name) if names is not None and names.count(name) == 1 else None


def _owner_positions(checker, scope, work, owners) -> set:
    """(owner module, position) for each call of a stepped module that the values in
    ``work`` ((expression, seq, position)) were computed from: the position of the
    call's result the value was unpacked from, None for the whole result (or a
    module called in an argument)."""
    found, seen = set(), set()
    while work and len(seen) < 200:
        node, when, position = work.pop()
        if position is None and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) \
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
            node, position = node.value, node.slice.value  # `critic(s, a)[1]`: the unpacked element
        names, modules = _dependencies(checker, node, scope.module_class, scope.owner_class)
        inner = set()
        if position is not None and isinstance(node, ast.Call):
            for arg in list(node.args) + [k.value for k in node.keywords]:
                inner |= set(_dependencies(checker, arg, scope.module_class, scope.owner_class)[1])
        for m in modules:
            owner = _owned(m, owners) or _owned(_held_name(checker, scope, m, when), owners)
            if owner is not None:
                found.add((owner, position if m not in inner else None, node))
        for n in names:
            entry = scope.binding(n, when)
            if entry is None or entry[1] is None or entry[2] or (n, entry[0]) in seen:
                continue
            seen.add((n, entry[0]))
            work.append((_value_of(scope, n, entry), entry[0], _position(checker, n, entry[1])))
    return found


def _over_named_tensors(checker, optimizer: str) -> bool:
    """The file builds ``optimizer`` only over a display of named tensors
    (`self.alpha_opt = Adam([self.log_alpha])`, CQL's Lagrange multiplier): its step
    changes those tensors alone, not the layers a loss was computed with, and
    nothing shows that the loss's graph saved them (`log_alpha.exp()` saves its
    result, not `log_alpha`): no claim from the layers called."""
    found = False
    for node in ast.walk(checker.tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], (ast.Name, ast.Attribute))
                and checker.text(node.targets[0]) == optimizer and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        short = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if "optim" not in short.lower() and short not in N.OPTIMIZER_CLASSES:
            continue
        first = node.value.args[0] if node.value.args else None
        if not (isinstance(first, (ast.List, ast.Tuple)) and first.elts
                and all(isinstance(e, (ast.Name, ast.Attribute)) for e in first.elts)):
            return False
        found = True
    return found
