"""AD182: a module combined from a list of modules is one of them. PySyft's `federated_avg(models)`
started with `model = models[0]` and added the other clients into it in place: the "average" was
client 0's own module, so loading the server's state into each client loaded client 0's state
into itself, and client 0's training moved the server model.

The run shows the alias at a load: `a.load_state_dict(b.state_dict())` where `a` and `b` are one
module, an item of a list of distinct modules of its class (recording/state_snapshots.py). The
program is then read for where `b` came from, and the report is made only when each link is
written: `b = f(..., items, ...)`, f a function of the same file given that list, which binds a
name to the list's item at the same index (`model = models[0]`) and writes in place (a method
ending in `_`, an augmented assignment) in its body or in a function of the file it hands that
name to. The line to change is the binding; with `copy` imported, the change combines into a deep
copy of the item (PR 3614's fix), otherwise the same as advice.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import Scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, replace_node_text, segment, statement_location


def combined_into_item_diagnosis(event) -> Diagnosis | None:
    """AD182 for an `OwnStateLoaded` event with `listed_at`, or None where a link is not written."""
    loaded = event.loaded[0] if event.loaded else None
    if loaded is None or event.listed_at is None or not event.names:
        return None
    list_name, index = event.listed_at
    scope = Scope(loaded.filename, loaded.lineno)
    load = scope.statement_at(loaded.lineno) if scope.tree is not None else None
    source = _loaded_source(load, event.names) if load is not None else None
    if source is None:
        return None
    receiver, owner = source
    binding = _bound_from_call(scope.node, owner, list_name)
    if binding is None:
        return None
    tree = parse_file(loaded.filename)
    function_name = binding.value.func.id
    definitions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)} if tree else {}
    definition = definitions.get(function_name)
    position = next(number for number, argument in enumerate(binding.value.args)
                    if isinstance(argument, ast.Name) and argument.id == list_name)
    if definition is None or definition.args.vararg or position >= len(definition.args.args):
        return None
    parameter = definition.args.args[position].arg
    item = _item_binding(definition, parameter, index)
    if item is None:
        return None
    merged = item.targets[0].id
    if not _writes_in_place(definition, merged, definitions):
        return None
    filename = loaded.filename
    item_text = segment(filename, item.value) or ast.unparse(item.value)
    primary = statement_location(filename, item, role="alias",
                                 note=f"{merged} is {item_text} itself, not a copy: {function_name}() writes the "
                                      f"combination into {list_name}[{index}]")
    related = [statement_location(filename, binding, role="combined",
                                  note=f"{owner} is {list_name}[{index}]: the same module"),
               location_of(loaded, role="load", note=f"{receiver} and {owner} are one module here: its own state "
                                                     "is loaded into itself")]
    notes = [f"{function_name}() returns {list_name}[{index}] with its weights overwritten by the combination: that "
             f"item loses its own weights, and from then on {owner} and {list_name}[{index}] are one module, so "
             f"training that item moves {owner} too"]
    copier = _deepcopy_name(tree)
    message = f"combine into a copy of {item_text}, so that {list_name}[{index}] keeps its weights and {owner} " \
              "is a module of its own"
    replacement = replace_node_text(filename, item, item.value, f"{copier}({item_text})") if copier else None
    help_ = (Suggestion(message, replacement, statement_location(filename, item)) if replacement is not None
             else Suggestion(message + f": `{merged} = copy.deepcopy({item_text})`"))
    return Diagnosis(code=codes.COMBINED_INTO_LISTED_MODULE, title=codes.title(codes.COMBINED_INTO_LISTED_MODULE),
                     severity="warning", primary=primary, related=[r for r in related if r is not None], notes=notes,
                     help=[help_])


def _loaded_source(statement: ast.stmt, names: tuple[str, ...]) -> tuple[str, str] | None:
    """(receiver, owner) of `receiver.load_state_dict(owner.state_dict())` in `statement`, two
    different names of the module."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load_state_dict" \
                and node.args and isinstance(node.func.value, ast.Name):
            argument = node.args[0]
            if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute) \
                    and argument.func.attr == "state_dict" and isinstance(argument.func.value, ast.Name):
                receiver, owner = node.func.value.id, argument.func.value.id
                if receiver != owner and receiver in names and owner in names:
                    return receiver, owner
    return None


def _bound_from_call(scope: ast.AST | None, owner: str, list_name: str) -> ast.Assign | None:
    """The one assignment `owner = f(..., list_name, ...)` of the scope, f a plain name."""
    if scope is None:
        return None
    found = [node for node in ast.walk(scope) if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and node.targets[0].id == owner
             and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
             and any(isinstance(argument, ast.Name) and argument.id == list_name for argument in node.value.args)]
    return found[0] if len(found) == 1 else None


def _item_binding(definition: ast.FunctionDef, parameter: str, index: int) -> ast.Assign | None:
    """The one statement `name = parameter[index]` of the function (a negative index counted
    from the end is not matched: the list's length is the run's)."""
    found = [node for node in ast.walk(definition) if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Subscript)
             and isinstance(node.value.value, ast.Name) and node.value.value.id == parameter
             and isinstance(node.value.slice, ast.Constant) and node.value.slice.value == index]
    return found[0] if len(found) == 1 else None


def _writes_in_place(definition: ast.FunctionDef, name: str, definitions: dict, depth: int = 0) -> bool:
    """Whether the function writes in place into what `name` holds: through a name made from it
    (`totals = merged.state_dict()`, `for mine in merged.parameters()`), by a method ending in `_`
    (`mine.add_(theirs)`) or an augmented assignment (`totals[key] += value`, `mine.data /= n`), or
    by handing it to a function of the file that does."""
    derived = _derived_names(definition, name)
    for node in ast.walk(definition):
        if isinstance(node, ast.AugAssign) and _root(node.target) in derived:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                and not node.func.attr.startswith("_") and _root(node.func.value) in derived:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in definitions \
                and depth < 2:
            given = [number for number, argument in enumerate(node.args)
                     if isinstance(argument, ast.Name) and argument.id in derived]
            called = definitions[node.func.id]
            if given and given[0] < len(called.args.args) \
                    and _writes_in_place(called, called.args.args[given[0]].arg, definitions, depth + 1):
                return True
    return False


def _derived_names(definition: ast.FunctionDef, name: str) -> set[str]:
    """`name` and the names bound from expressions that read it (assignments and `for` targets,
    `zip(...)` over it included), in the order they are written."""
    derived = {name}
    bindings = sorted((node for node in ast.walk(definition) if isinstance(node, (ast.Assign, ast.For))),
                      key=lambda node: node.lineno)
    for node in bindings:
        value = node.value if isinstance(node, ast.Assign) else node.iter
        if not any(isinstance(inner, ast.Name) and inner.id in derived for inner in ast.walk(value)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(node, ast.For) and isinstance(node.target, ast.Tuple) and _zip_call(value):
            # `for mine, theirs in zip(merged.parameters(), other.parameters())`: only the places
            # whose iterable reads the name.
            targets = [target for target, iterable in zip(node.target.elts, value.args)
                       if any(isinstance(inner, ast.Name) and inner.id in derived for inner in ast.walk(iterable))]
        derived |= {inner.id for target in targets for inner in ast.walk(target) if isinstance(inner, ast.Name)}
    return derived


def _zip_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip" \
        and not node.keywords


def _root(node: ast.AST) -> str | None:
    """`x` of `x`, `x.data`, `x[key]`, `x.weight.data`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _deepcopy_name(tree: ast.Module | None) -> str | None:
    """How the file calls copy.deepcopy: `copy.deepcopy` after `import copy`, `deepcopy` after
    `from copy import deepcopy`; None when neither is imported at its top level."""
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Import) and any(alias.name == "copy" and alias.asname is None for alias in node.names):
            return "copy.deepcopy"
        if isinstance(node, ast.ImportFrom) and node.module == "copy" \
                and any(alias.name == "deepcopy" and alias.asname is None for alias in node.names):
            return "deepcopy"
    return None
