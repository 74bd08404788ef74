"""AD327: a term of the loss that a loss module or loss function of the user's returned was computed
from a copy cut from the graph (`pred.detach().cpu()` handed to NumPy, `pred.item()`, `pred.data`)
and made a tensor again (`torch.tensor(...)`): a constant beside terms that train. backward() runs,
every parameter gets a gradient from the other terms, and the term trains nothing.

AD206 (number_terms.py) reads the terms in the backward() line's own function; here the loss is
`loss = criterion(pred, target)` there, and the terms are in `criterion`'s forward, whose frame is
gone when backward() runs. So the evidence is the source of that function plus what the caller's
frame and the loss's graph hold:
- the caller's argument bound to the cut parameter carries a graph (a tensor that requires grad,
  or an expression calling a module with trainable parameters);
- following the callee's names to their assignments (and into the arguments of the calls that
  made them), every value the term reads comes from a cut of such a parameter, from a constant, or
  from a value without a graph (a target); at least one cut of a graph-carrying value is reached;
- another term of the same returned sum reads a graph-carrying value, and, at run time, the loss
  backpropagated has a sum one of whose inputs has no graph.
A target computed from detached values and compared with the live prediction (`mse(pred,
target)`) reads the prediction itself and is not reported; nor is a constant from no cut, nor a
value not added to the returned loss. The help is advice: the term must be written in torch.
"""

from __future__ import annotations

import ast
import builtins
import inspect

import torch

from autograd_doctor.analysis import number_terms
from autograd_doctor.analysis.live_values import attribute_without_running_code
from autograd_doctor.analysis.gradientless_steps import called_object, user_callee
from autograd_doctor.analysis.source_scope import frame_values, live_frame
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import function_starting_at, segment, statement_at, statement_location
from autograd_doctor.recording.frames import Site

# The three states of a value read in the loss function.
LIVE, UNKNOWN, CONSTANT = "live", "unknown", "constant"
# A global name or attribute that is not there.
MISSING = object()
# Methods and attributes whose result is a copy of a tensor's values outside the graph.
CUT_METHODS = {"detach", "item", "numpy", "tolist"}
CUT_BUILTINS = {float, int}
# How many assignments deep a name of the loss function is followed.
MAX_DEPTH = 8
# How many nodes of the loss's graph are looked at for a sum with an input without a graph.
MAX_GRAPH_NODES = 12


def called_loss_cut_term_diagnosis(site: Site | None, roots) -> Diagnosis | None:
    """AD327 for the loss backpropagated at `site` (the backward() call), or None."""
    if not any(isinstance(root, torch.Tensor) and root.grad_fn is not None for root in roots) \
            or not any(_sum_with_constant_input(root.grad_fn) for root in roots if isinstance(root, torch.Tensor)):
        return None
    found = number_terms.loss_terms(site)
    frame = live_frame(site)
    if found is None or frame is None:
        return None
    terms, _ = found
    caller_values = frame_values(frame)
    for term, holder in terms:
        if not isinstance(term, ast.Call):
            continue
        target = called_object(term.func, caller_values)
        callee = user_callee(target)
        if callee is None and not isinstance(target, torch.nn.Module) and inspect.isfunction(
                getattr(type(target), "__call__", None)):
            callee = user_callee(target.__call__)  # an instance of the user's class with __call__
        if callee is None:
            continue
        diagnosis = _callee_diagnosis(site, holder, term, callee[0], callee[1], caller_values)
        if diagnosis is not None:
            return diagnosis
    return None


def _sum_with_constant_input(node) -> bool:
    """Whether the top of the graph (through sums and scalings) has a sum one of whose inputs has
    no graph: a constant added to the loss."""
    seen, stack = 0, [node]
    while stack and seen < MAX_GRAPH_NODES:
        node = stack.pop()
        seen += 1
        name = type(node).__name__
        if not name.startswith(("Add", "Sub", "Mul", "Div", "Neg")):
            continue
        inputs = [next_node for next_node, _ in node.next_functions]
        if name.startswith(("Add", "Sub")) and any(next_node is None for next_node in inputs):
            return True
        stack.extend(next_node for next_node in inputs if next_node is not None)
    return False


class _Callee:
    """The loss function read: its def, file, globals, module instance, and its parameters'
    states from the caller's arguments."""

    def __init__(self, function, owner, node: ast.FunctionDef, parameters: dict):
        self.owner = owner
        self.node = node
        self.filename = function.__code__.co_filename
        self.values = dict(getattr(function, "__globals__", {}))
        if owner is not None:
            self.values["self"] = owner
        self.parameters = parameters
        self.names_read = {}


def _callee_diagnosis(site, holder, call: ast.Call, function, owner, caller_values: dict) -> Diagnosis | None:
    node = function_starting_at(function.__code__.co_filename, function.__code__.co_firstlineno)
    if node is None:
        return None
    parameters = _parameter_states(function, owner, call, caller_values)
    if parameters is None:
        return None
    callee = _Callee(function, owner, node, parameters)
    returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1:
        return None
    ret = returns[0]
    terms = list(number_terms.added_terms(ret.value, node, ret.lineno, callee.values))
    states = [(term, term_holder, _state(term, callee, term_holder.lineno if term_holder else ret.lineno, 0))
              for term, term_holder in terms]
    if not any(state == LIVE for _, _, (state, _) in states):
        return None  # the whole loss has no graph from here: AD214's case, not this one
    for term, term_holder, (state, cuts) in states:
        if state == CONSTANT and cuts:
            term, term_holder = _made_at(term, term_holder or ret, callee)
            return _diagnosis(site, holder, callee, ret, term, term_holder, cuts)
    return None


def _made_at(term: ast.AST, holder: ast.stmt, callee: _Callee) -> tuple[ast.AST, ast.stmt]:
    """The term and the statement that made it, looking through a scaling by a weight
    (`self.edge_weight * edge_loss`: the name's assignment makes the term)."""
    while isinstance(term, ast.BinOp) and isinstance(term.op, (ast.Mult, ast.Div)):
        right = _state(term.right, callee, holder.lineno, 0)
        if right[1]:
            term = term.right
        elif isinstance(term.op, ast.Mult) and _state(term.left, callee, holder.lineno, 0)[1]:
            term = term.left
        else:
            break
    if isinstance(term, ast.Name):
        made = [n for n in ast.walk(callee.node) if isinstance(n, ast.Assign) and n.lineno < holder.lineno
                and term.id in _stored(n)]
        if made:
            return term, max(made, key=lambda n: n.lineno)
    return term, holder


def _parameter_states(function, owner, call: ast.Call, caller_values: dict) -> dict | None:
    """Each parameter of the loss function, with the state of the caller's argument bound to it."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    try:
        signature = inspect.signature(function)
        leading = [None] if owner is not None else []
        bound = signature.bind(*leading, *call.args, **{k.arg: k.value for k in call.keywords})
    except (TypeError, ValueError):
        return None
    states = {}
    for name, argument in bound.arguments.items():
        states[name] = _argument_state(argument, caller_values) if isinstance(argument, ast.AST) else UNKNOWN
    return states


def _argument_state(node: ast.AST, values: dict) -> str:
    """LIVE where the caller's argument holds a tensor that requires grad or calls a module with
    trainable parameters; CONSTANT where every name in it holds a value without a graph."""
    state = CONSTANT
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            target = called_object(inner.func, values)
            if isinstance(target, torch.nn.Module) and any(p.requires_grad for p in target.parameters()):
                return LIVE
        if isinstance(inner, ast.Name):
            if inner.id not in values and not hasattr(builtins, inner.id):
                state = UNKNOWN
                continue
            if isinstance(inner.ctx, ast.Load):
                value_state = _value_state(values.get(inner.id, getattr(builtins, inner.id, None)))[0]
                if value_state == LIVE:
                    return LIVE
                if value_state == UNKNOWN:
                    state = UNKNOWN
    return state


def _combine(states) -> tuple[str, list]:
    states = list(states)
    cuts = [cut for _, found in states for cut in found]
    kinds = {state for state, _ in states}
    if LIVE in kinds:
        return LIVE, cuts
    if UNKNOWN in kinds:
        return UNKNOWN, cuts
    return CONSTANT, cuts


def _state(node: ast.AST, callee: _Callee, before: int, depth: int) -> tuple[str, list]:
    """(LIVE, UNKNOWN or CONSTANT, the cuts of graph-carrying values reached) of an expression
    of the loss function, read before line `before`."""
    if depth > MAX_DEPTH:
        return UNKNOWN, []
    if isinstance(node, ast.Constant):
        return CONSTANT, []
    if isinstance(node, ast.Name):
        return _name_state(node.id, callee, before, depth)
    if isinstance(node, ast.Attribute):
        if node.attr == "data":
            return _cut_state(node, node.value, callee, before, depth)
        if _global_root(node, callee):
            value = _lookup(node, callee)
            return _value_state(value) if value is not MISSING else (UNKNOWN, [])
        return _state(node.value, callee, before, depth)
    if isinstance(node, ast.Call):
        return _call_state(node, callee, before, depth)
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Subscript, ast.Tuple, ast.List, ast.Slice,
                         ast.BoolOp, ast.keyword, ast.Starred)):
        return _combine(_state(child, callee, before, depth) for child in ast.iter_child_nodes(node)
                        if not isinstance(child, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)))
    return UNKNOWN, []


def _global_root(node: ast.AST, callee: _Callee) -> bool:
    """Whether a name or attribute chain starts at `self` or at a global of the function's module
    (not at a parameter or a local, whose values are not there any more)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    if node.id == "self":
        return callee.owner is not None
    return node.id not in callee.parameters and not _assigned_in(node.id, callee.node)


def _lookup(node: ast.AST, callee: _Callee):
    """The value of a global name or attribute chain (`np.real`, `self.criterion`), or MISSING."""
    if isinstance(node, ast.Name):
        if node.id == "self":
            return callee.owner
        if node.id in callee.values:
            return callee.values[node.id]
        return getattr(builtins, node.id, MISSING)
    if isinstance(node, ast.Attribute):
        base = _lookup(node.value, callee)
        if base is MISSING:
            return MISSING
        if inspect.ismodule(base):
            return getattr(base, node.attr, MISSING)
        value = attribute_without_running_code(base, node.attr)
        return MISSING if value is None else value
    return MISSING


def _value_state(value) -> tuple[str, list]:
    if isinstance(value, torch.Tensor):
        return (LIVE if value.requires_grad else CONSTANT), []
    if isinstance(value, torch.nn.Module):
        return (LIVE if any(p.requires_grad for p in value.parameters()) else CONSTANT), []
    if isinstance(value, (int, float, complex, str, bool, torch.dtype, torch.device)) or value is None \
            or inspect.ismodule(value) or inspect.isroutine(value) or isinstance(value, type) \
            or type(value).__module__.split(".")[0] == "numpy":  # an array or a NumPy number
        return CONSTANT, []
    return UNKNOWN, []


def _assigned_in(name: str, function: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(function))


def _name_state(name: str, callee: _Callee, before: int, depth: int) -> tuple[str, list]:
    key = (name, before)
    if key not in callee.names_read:  # a name read in several places is followed once
        callee.names_read[key] = _followed_name_state(name, callee, before, depth)
    return callee.names_read[key]


def _followed_name_state(name: str, callee: _Callee, before: int, depth: int) -> tuple[str, list]:
    if name in callee.parameters and not _assigned_before(name, callee, before):
        return callee.parameters[name], []
    bindings = [n for n in ast.walk(callee.node) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                and n.lineno < before and name in _stored(n)]
    if bindings:
        last = max(bindings, key=lambda n: n.lineno)
        if isinstance(last, ast.AugAssign):
            return _combine([_state(last.value, callee, last.lineno, depth + 1),
                             _name_state(name, callee, last.lineno, depth + 1)])
        if last.value is None:
            return UNKNOWN, []
        return _state(last.value, callee, last.lineno, depth + 1)
    if _assigned_in(name, callee.node):
        return UNKNOWN, []  # bound by a loop, a with, a comprehension: not followed
    value = _lookup(ast.Name(id=name), callee)
    return _value_state(value) if value is not MISSING else (UNKNOWN, [])


def _assigned_before(name: str, callee: _Callee, before: int) -> bool:
    return any(n.lineno < before and name in _stored(n) for n in ast.walk(callee.node)
               if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)))


def _stored(statement: ast.stmt) -> set:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _cut_state(node: ast.AST, receiver: ast.AST, callee: _Callee, before: int, depth: int) -> tuple[str, list]:
    """A copy outside the graph: CONSTANT, with the cut itself when what it copies carries a graph."""
    state, cuts = _state(receiver, callee, before, depth)
    return CONSTANT, cuts + ([(node, receiver)] if state == LIVE else [])


def _call_state(node: ast.Call, callee: _Callee, before: int, depth: int) -> tuple[str, list]:
    if isinstance(node.func, ast.Attribute) and node.func.attr in CUT_METHODS:
        return _cut_state(node, node.func.value, callee, before, depth)
    target = _lookup(node.func, callee) if _global_root(node.func, callee) else MISSING
    if target in CUT_BUILTINS and len(node.args) == 1:
        return _cut_state(node, node.args[0], callee, before, depth)
    if any(k.arg == "requires_grad" for k in node.keywords):
        return UNKNOWN, []  # a new leaf: not a constant
    arguments = [_state(a, callee, before, depth) for a in [*node.args, *(k.value for k in node.keywords)]]
    if isinstance(node.func, ast.Attribute) and target is MISSING:
        # a method of a value of the function's (`x.to(device)`, `x.mean()`): the receiver's state
        return _combine([_state(node.func.value, callee, before, depth), *arguments])
    if isinstance(target, torch.nn.Module):
        return _combine([_value_state(target), *arguments])
    if target is MISSING or not callable(target):
        return UNKNOWN, []
    return _combine(arguments)


def _diagnosis(site: Site, holder, callee: _Callee, ret: ast.Return, term: ast.AST, term_holder: ast.stmt,
               cuts: list) -> Diagnosis:
    filename = callee.filename
    cut, receiver = cuts[0]
    cut_statement = statement_at(filename, cut.lineno)
    converted = segment(filename, cut) or ast.unparse(cut)
    tensor_text = segment(filename, receiver) or ast.unparse(receiver)
    term_text = _term_name(term, term_holder, callee) or segment(filename, term) or ast.unparse(term)
    where = f"{type(callee.owner).__name__}.{callee.node.name}()" if callee.owner is not None \
        else f"{callee.node.name}()"
    location = statement_location(filename, cut_statement, role="cut",
                                  note=f"{converted} is a copy of {tensor_text}'s values outside the graph")
    related = []
    if term_holder.lineno != cut_statement.lineno:
        related.append(statement_location(filename, term_holder, role="term",
                                          note=f"{term_text} is computed only from that copy: it has no graph"))
    if ret.lineno != term_holder.lineno:
        related.append(statement_location(filename, ret, role="returned", note=f"{where} returns the loss with "
                                          "that term added"))
    for statement in ast.walk(callee.node):
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
                and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "requires_grad_":
            related.append(statement_location(filename, statement, role="no effect", note="requires_grad_(True) on a "
                                              "loss that already has a graph (from its other terms) changes nothing"))
    caller_file = site.filename
    if holder is not None:
        related.append(statement_location(caller_file, holder, role="loss", note=f"the loss backpropagated, from "
                                          f"{where}"))
    notes = [f"{tensor_text} carries a graph, but {converted} copies its values out of it, and the term {term_text} "
             f"of the loss {where} returns is computed from that copy and from nothing that carries a gradient: it "
             "changes the loss's value and sends no gradient back, so it trains nothing; the loss's other terms "
             "still reach the model, so nothing fails"]
    help_ = Suggestion(f"compute {term_text} with torch operations on {tensor_text} itself, not on a copy outside the "
                       "graph (the same computation written in torch), so that its gradient reaches what "
                       f"{tensor_text} is computed from; keep the copy for logging only, or, if the term is only "
                       "meant to be logged, do not add it to the loss")
    return Diagnosis(code=codes.CUT_TERM_IN_CALLED_LOSS, title=codes.title(codes.CUT_TERM_IN_CALLED_LOSS),
                     severity="warning", primary=location, related=related, notes=notes, help=[help_])



def _term_name(term: ast.AST, holder: ast.stmt, callee: _Callee) -> str | None:
    """The name the term is held by (`soft_loss = a + b`, every term of it without a graph), or None."""
    if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name) \
            and _state(holder.value, callee, holder.lineno, 0)[0] == CONSTANT:
        return holder.targets[0].id
    return None
