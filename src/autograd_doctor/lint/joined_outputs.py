"""Outputs of every element of a list, joined before a loop over the same list
whose iterations write the elements' modules in place (facts for ADL003).

The multi-agent learner's idiom: a first loop calls each agent's actor and
appends the result, `mu = torch.cat(all_mu, dim=1)` joins them, and a second
loop over the same agents backpropagates a loss of `mu` (keeping the graph)
and steps the agent's actor.  Every later iteration's backward goes through
the actors that earlier iterations stepped, whose old weights `mu`'s graph
saved.  Only what the function's own statements show is used: loops and
bindings at the top level of the function and of each loop body (a statement
under an `if`, `try` or `with` may not run, or runs without gradients), and
the classes of the same file, or of project files it imports them from (two
hops: the learner imports `Agent`, whose file imports `ActorNetwork`), for
which optimizer or method writes which attribute's parameters."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograd_doctor.lint.clearing import absolute_module, parsed_file, project_class
from autograd_doctor.lint.names import self_attribute

JOINS = {"cat", "stack", "concat", "hstack", "vstack"}
# a value read through one of these holds no graph of what it was computed from
CUTS = {"detach", "item", "numpy", "tolist", "data", "cpu_numpy"}
NOT_WRITES = {"requires_grad_", "retain_grad", "register_hook"}


@dataclass(frozen=True)
class Crossing:
    """A write of ``element.attribute``'s parameters in the second loop
    (``writer``) and a backward in the same loop through ``joined``, built
    before the loop from every element's ``attribute``."""
    writer: ast.Call
    backward: ast.Call
    joined: str
    joined_statement: ast.stmt
    attribute: str
    element: str


def crossings(tree: ast.Module, filename: str, function, text) -> list[Crossing]:
    """Each writer of the second loop paired with the first backward it breaks."""
    body = function.body
    lists = {}   # list name -> (attribute, iterable text), filled by a first loop
    joined = {}  # joined name -> (attribute, iterable text, statement)
    found = []
    assigned = _assignment_counts(function)
    classes = None
    for stmt in body:
        loop = _element_loop(stmt, text)
        if loop is not None:
            element, iterable = loop
            for name, attribute in _appended_outputs(stmt.body, element).items():
                lists[name] = (attribute, iterable)
            if not joined:
                continue
            if classes is None:
                classes = known_classes(tree, filename)
            found += _second_loop(stmt, element, iterable, joined, classes, text)
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            source = _joined_list(stmt.value)
            if assigned.get(name) != 1:
                continue
            if isinstance(source, str) and source in lists:
                attribute, iterable = lists[source]
                joined[name] = (attribute, iterable, stmt)
            elif isinstance(source, ast.comprehension):  # `torch.cat([a.actor(o) for a in X])`
                made = _comprehension_outputs(stmt.value, source, text)
                if made is not None:
                    joined[name] = made + (stmt,)
    return found


def known_classes(tree: ast.Module, filename: str, hops: int = 2) -> list:
    """The classes of the file and those its top-level `from m import C` bring from
    project files, following their own files' imports ``hops`` times."""
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    seen = {id(c) for c in classes}
    frontier = [(tree, filename)]
    for _ in range(hops):
        reached = []
        for module_tree, path in frontier:
            for node in module_tree.body:
                if not isinstance(node, ast.ImportFrom):
                    continue
                module = absolute_module(node, path)
                for alias in node.names:
                    found = project_class(f"{module}.{alias.name}", path) if module and alias.name != "*" else None
                    if found is not None and id(found[1]) not in seen:
                        seen.add(id(found[1]))
                        classes.append(found[1])
                        reached.append((parsed_file(found[0]), found[0]))
        frontier = [(t, p) for t, p in reached if t is not None]
    return classes


def _assignment_counts(function) -> dict:
    counts = {}
    for node in ast.walk(function):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
    return counts


def _element_loop(stmt, text):
    """`for agent in X:` or `for i, agent in enumerate(X):` -> ("agent", text of X)."""
    if not isinstance(stmt, ast.For) or stmt.orelse:
        return None
    iterable, target = stmt.iter, stmt.target
    if isinstance(target, ast.Tuple):
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                and iterable.func.id == "enumerate" and len(iterable.args) == 1 and not iterable.keywords
                and len(target.elts) == 2):
            return None
        iterable, target = iterable.args[0], target.elts[1]
    if not isinstance(target, ast.Name) or not isinstance(iterable, (ast.Name, ast.Attribute)):
        return None
    return target.id, text(iterable)


def _element_module(call, element):
    """`agent.actor(x)` or `agent.actor.forward(x)` -> "actor"."""
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "forward":
        func = func.value
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == element:
        return func.attr
    return None


def _appended_outputs(body, element) -> dict:
    """Lists that the loop body appends a module output of the element to,
    directly or through a name bound to the output in the body."""
    outputs = {}  # name bound to `element.attribute(...)` -> attribute
    appended = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            attribute = _element_module(stmt.value, element)
            if attribute is not None:
                outputs[stmt.targets[0].id] = attribute
            else:
                outputs.pop(stmt.targets[0].id, None)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and \
                    isinstance(call.func.value, ast.Name) and len(call.args) == 1:
                value = call.args[0]
                attribute = outputs.get(value.id) if isinstance(value, ast.Name) else _element_module(value, element)
                if attribute is not None:
                    appended[call.func.value.id] = attribute
    return appended


def _comprehension_outputs(value, generator, text):
    """(attribute, iterable text) of `[agent.actor(o) for agent in X]` or `[a.actor(obs[i])
    for i, a in enumerate(X)]` joined by ``value``."""
    element = _element_loop(ast.For(target=generator.target, iter=generator.iter, body=[], orelse=[]), text)
    if element is None:
        return None
    comprehension = next(n for n in ast.walk(value) if isinstance(n, (ast.ListComp, ast.GeneratorExp))
                         and n.generators[0] is generator)
    attribute = _element_module(comprehension.elt, element[0])
    return (attribute, element[1]) if attribute is not None else None


def _joined_list(value):
    """`torch.cat(L, 1)`, `torch.cat([a for a in L], dim=1)`, `torch.stack(L).mean(0)` -> "L";
    the comprehension's generator for `torch.cat([a.actor(o) for a in X])`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr not in JOINS and value.func.attr not in CUTS:
        value = value.func.value  # a method applied to the joined value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr in JOINS and isinstance(value.func.value, ast.Name) and value.args):
        return None
    first = value.args[0]
    if isinstance(first, (ast.ListComp, ast.GeneratorExp)) and len(first.generators) == 1:
        generator = first.generators[0]
        if generator.ifs or generator.is_async:
            return None
        if isinstance(generator.target, ast.Name) and isinstance(first.elt, ast.Name) and \
                first.elt.id == generator.target.id:
            first = generator.iter
        else:
            return generator
    return first.id if isinstance(first, ast.Name) else None


def _second_loop(loop, element, iterable, joined, classes, text) -> list:
    """The writers and backwards of the loop's own statements, in a loop over
    the same elements as the joined values' first loop."""
    reaches = {}  # name bound in the body -> joined names its value was computed from
    backwards = []
    writers = []
    for stmt in loop.body:
        if isinstance(stmt, ast.Assign):
            sources = _joined_read(stmt.value, joined, reaches)
            for target in stmt.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                        if name.id in joined:
                            return []  # the joined value rebuilt in the loop
                        reaches[name.id] = sources
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            reaches[stmt.target.id] = reaches.get(stmt.target.id, set()) | _joined_read(stmt.value, joined, reaches)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "backward" and _retains_graph(call) \
                    and isinstance(func.value, ast.Name):
                for name in sorted(reaches.get(func.value.id, ())):
                    backwards.append((call, name))
                continue
            attributes = _written_attributes(call, element, classes)
            if attributes:
                writers.append((call, attributes))
    found = []
    for writer, attributes in writers:
        for backward, name in backwards:
            attribute, first_iterable, stmt = joined[name]
            if attribute in attributes and first_iterable == iterable:
                found.append(Crossing(writer, backward, name, stmt, attribute, element))
                break
    return found


def _joined_read(value, joined, reaches) -> set:
    """The joined names ``value`` is computed from, by names and calls; none
    through a cut (`.detach()`, `.item()`, `.data`)."""
    sources = set()
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute) and node.attr in CUTS:
            return set()
        if isinstance(node, ast.Name):
            if node.id in joined:
                sources.add(node.id)
            sources |= reaches.get(node.id, set())
    return sources


def _retains_graph(call) -> bool:
    return any(k.arg == "retain_graph" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


def _written_attributes(call, element, classes) -> set:
    """Which attributes of the element the call writes the parameters of in place:
    `agent.actor.optimizer.step()` (an optimizer a class of the file builds over its
    own parameters, that class held as `self.actor`), `agent.actor_optimizer.step()`
    (built over `self.actor.parameters()`), or `agent.update_targets()` (a method of
    a class of the file that writes `self.target_actor`'s parameters in place)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or call.args or call.keywords:
        return set()
    if func.attr == "step":
        holder = func.value
        if not isinstance(holder, ast.Attribute):
            return set()
        optimizer = holder.attr
        if isinstance(holder.value, ast.Name) and holder.value.id == element:
            return {a for cls in classes for a in _optimizer_attributes(cls, optimizer)}
        held = holder.value
        if isinstance(held, ast.Attribute) and isinstance(held.value, ast.Name) and held.value.id == element:
            owners = {cls.name for cls in classes if "" in _optimizer_attributes(cls, optimizer)}
            if owners and any(_holds_instance(cls, held.attr, owners) for cls in classes):
                return {held.attr}
        return set()
    if isinstance(func.value, ast.Name) and func.value.id == element:
        written = set()
        for cls in classes:
            for method in cls.body:
                if isinstance(method, ast.FunctionDef) and method.name == func.attr:
                    written |= _method_writes(method)
        return written
    return set()


def _optimizer_attributes(cls, optimizer) -> set:
    """Attributes whose parameters `self.<optimizer>` is built over in ``cls``'s
    methods ("" for the object's own `self.parameters()`)."""
    found = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and self_attribute(node.targets[0]) == optimizer \
                and isinstance(node.value, ast.Call) and _is_optimizer(node.value) and node.value.args:
            first = node.value.args[0]
            if isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr == "parameters":
                owner = first.func.value
                if isinstance(owner, ast.Name) and owner.id == "self":
                    found.add("")
                elif self_attribute(owner):
                    found.add(self_attribute(owner))
    return found


def _is_optimizer(call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in {"Adam", "AdamW", "SGD", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"}


def _holds_instance(cls, attribute, owners) -> bool:
    """``cls`` binds `self.<attribute>` to a new instance of one of ``owners``."""
    return any(isinstance(node, ast.Assign) and len(node.targets) == 1
               and self_attribute(node.targets[0]) == attribute and isinstance(node.value, ast.Call)
               and isinstance(node.value.func, ast.Name) and node.value.func.id in owners
               for node in ast.walk(cls))


def _method_writes(method) -> set:
    """Attributes of `self` whose parameters the method writes in place, by
    statements that always run: `self.t.load_state_dict(...)`, or, in a loop over
    `((self.t, self.a), ...)`, `target.load_state_dict(...)`, or an in-place method
    (`p.mul_(...)`, `p.copy_(...)`; not through `.data`) on `p` of
    `zip(target.parameters(), ...)` / `target.parameters()`."""
    written = set()

    def walk(statements, modules, parameters):
        for stmt in statements:
            if isinstance(stmt, ast.With):
                walk(stmt.body, modules, parameters)
            elif isinstance(stmt, ast.For) and not stmt.orelse:
                inner_modules, inner_parameters = dict(modules), dict(parameters)
                _loop_bindings(stmt, modules, inner_modules, inner_parameters)
                walk(stmt.body, inner_modules, inner_parameters)
            elif isinstance(stmt, ast.Expr):
                call = stmt.value
                while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                    receiver, method_name = call.func.value, call.func.attr
                    if method_name == "load_state_dict":
                        written.update(_modules_named(receiver, modules))
                    elif method_name.endswith("_") and not method_name.endswith("__") and \
                            method_name not in NOT_WRITES and isinstance(receiver, ast.Name):
                        written.update(parameters.get(receiver.id, ()))
                    call = receiver  # `t.mul_(a).add_(b)`: the first write is on `t`

    walk(method.body, {}, {})
    return written


def _modules_named(node, modules) -> set:
    if self_attribute(node):
        return {self_attribute(node)}
    if isinstance(node, ast.Name):
        return set(modules.get(node.id, ()))
    return set()


def _loop_bindings(loop, modules, inner_modules, inner_parameters) -> None:
    """What a `for` binds: names of modules over a literal of `self` attributes, or
    parameters of modules (`zip(a.parameters(), b.parameters())`)."""
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, (ast.Tuple, ast.List)):
        for element in iterable.elts:
            if isinstance(target, ast.Name):
                inner_modules.setdefault(target.id, set()).update(_modules_named(element, modules))
            elif isinstance(target, ast.Tuple) and isinstance(element, (ast.Tuple, ast.List)) and \
                    len(element.elts) == len(target.elts):
                for name, value in zip(target.elts, element.elts):
                    if isinstance(name, ast.Name):
                        inner_modules.setdefault(name.id, set()).update(_modules_named(value, modules))
        return
    sources = [iterable]
    names = [target]
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "zip" \
            and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args):
        sources, names = iterable.args, target.elts
    for source, name in zip(sources, names):
        if isinstance(name, ast.Name) and isinstance(source, ast.Call) and \
                isinstance(source.func, ast.Attribute) and source.func.attr == "parameters":
            inner_parameters[name.id] = _modules_named(source.func.value, modules)
