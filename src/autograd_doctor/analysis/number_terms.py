"""AD206: a term of the loss was cut from the graph (`.item()`, `float(...)`, `.detach()`,
`.data`, `torch.autograd.grad` without create_graph, a function computing it with numpy from
`h.detach().numpy()`) before it was added: it changes the loss's value but not one gradient, so it
trains nothing, and nothing is None to give it away.

Looked at once per backward() line, right after the backward call: the loss expression is read
from the source and split into its added terms (following names to their assignments in the
same function, `+=` and `-=` included, and through scaling by a number: `2.0 * term`,
`total / n`); a term that surely carries no gradient (numbers, tensors that do not require
grad, and torch's own functions and modules of them) and that cuts a tensor that requires grad
is such a term (a name in it that holds a tensor without grad is followed to its assignment,
where the cut may be: `g = torch.autograd.grad(y, x)[0]`, then `penalty = (g.norm() - 1) ** 2`;
a name turned into its own number, `adv = adv.detach().item()`, is read as the tensor its
previous assignment made, and the help moves that line after backward()).
Values are read from the backward call's live frame, never computed: nothing
of the user's program runs again.
"""

from __future__ import annotations

import ast
import builtins
import types

import torch

from autograd_doctor.analysis.live_values import attribute_without_running_code
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis import decision_cuts
from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import block_holding, flows_to_return, live_frame, root_expression, stored_names
from autograd_doctor.recording import switches
from autograd_doctor.recording.frames import Site
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (call_argument, function_definition, parse_file, replace_node_text, segment, source_line, statement_at,
                                              statement_location, walk_covering)

# How many assignments deep a name in the loss is followed.
MAX_DEPTH = 4

def loss_terms(site: Site | None) -> tuple[list, Reading] | None:
    """The terms added into the loss backpropagated at `site`, as (term, statement holding it
    or None for the backward() line itself), and what they are read with (the live frame's
    values, the function around the line); None when the frame or the source is not there."""
    if site is None:
        return None
    frame = live_frame(site)
    statement = statement_at(site.filename, site.lineno)
    root = root_expression(statement) if statement is not None else None
    tree = parse_file(site.filename)
    if frame is None or root is None or tree is None:
        return None
    scope = enclosing_function(tree, site.lineno)
    values = {**frame.f_globals, **frame.f_locals}
    return list(_added_terms(root, scope, site.lineno, 0, values)), Reading(values, scope, site.filename)


def added_terms(expression: ast.AST, scope: ast.AST, before: int, values: dict) -> list:
    """(term, statement holding it or None) for each term added into `expression`, read in
    `scope` before line `before` (names followed to their assignments, scalings by a number in
    `values` looked through): the same reading as the backward() line's loss."""
    return list(_added_terms(expression, scope, before, 0, values))


def assignments_of(name: str, reading: Reading, before: int, unpacking: bool = False) -> list[ast.stmt]:
    """The statements that last gave `name` its value before line `before` (latest first); with
    `unpacking`, also an assignment that unpacks into `name` (`current, state = solver(...)`)."""
    return _bindings(reading.scope, name, before, unpacking)


def read_value(node: ast.AST, reading: Reading):
    """The value of a name or plain attribute chain in the frame (nothing is called)."""
    return _read(node, reading.values)


def terms_not_yet_run(site: Site | None) -> bool:
    """Whether a term added into the loss at `site` names a variable the backward() frame does
    not hold yet: its statement has not run (`if epoch > 0: loss += mu * penalty`, a term
    added from the second epoch on), so the term cannot be read at this backward() and is
    looked at again at a later one."""
    found = loss_terms(site)
    if found is None:
        return False
    terms, reading = found
    return any(isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in reading.values
               and not hasattr(builtins, node.id)
               for term, _ in terms for node in ast.walk(term))


def number_term_diagnosis(site: Site | None) -> Diagnosis | None:
    """AD206 for the loss backpropagated at `site` (the backward() call), or None."""
    found = loss_terms(site)
    if found is None:
        return None
    terms, reading = found
    scope = reading.scope
    for term, holder in terms:
        cut = _cut_tensor(term, reading, holder.lineno if holder is not None else site.lineno)
        if cut is not None and not _kept_beside(cut, term, terms):
            return _diagnosis(site, holder, term, cut, scope)
    return None


class Reading:
    """What a term is read with: the backward() frame's values and the function around it."""

    def __init__(self, values: dict, scope: ast.AST, filename: str | None = None):
        self.values = values
        self.scope = scope
        self.filename = filename


def _added_terms(expression: ast.AST, scope: ast.AST, before: int, depth: int, values: dict):
    """(term, statement holding it) for each term added into `expression`, following names and
    scalings by a number (a term of `2.0 * total` or `total / n` is a term of `total`)."""
    if isinstance(expression, ast.BinOp) and isinstance(expression.op, (ast.Add, ast.Sub)):
        yield from _added_terms(expression.left, scope, before, depth, values)
        yield from _added_terms(expression.right, scope, before, depth, values)
        return
    if isinstance(expression, ast.UnaryOp) and isinstance(expression.op, (ast.USub, ast.UAdd)):
        yield from _added_terms(expression.operand, scope, before, depth, values)
        return
    scaled = _scaled_part(expression, values)
    if scaled is not None:
        yield from _added_terms(scaled, scope, before, depth, values)
        return
    if isinstance(expression, ast.Name) and depth < MAX_DEPTH:
        for statement in _bindings(scope, expression.id, before, unpacking=True):
            if isinstance(statement, ast.AugAssign) and not isinstance(statement.op, (ast.Add, ast.Sub)):
                continue
            yield from ((term, holder if holder is not None else statement)
                        for term, holder in _added_terms(_bound_value(statement, expression.id), scope,
                                                         statement.lineno, depth + 1, values))
            if isinstance(statement, ast.Assign):
                return
        return
    yield expression, None


def _scaled_part(expression: ast.AST, values: dict) -> ast.AST | None:
    """`part` of `number * part`, `part * number` or `part / number` (a number written in the
    source or a name holding a Python number): the terms of `part` are terms of the loss."""
    if not isinstance(expression, ast.BinOp):
        return None
    if isinstance(expression.op, ast.Mult):
        if _plain_number(expression.left, values):
            return expression.right
        if _plain_number(expression.right, values):
            return expression.left
    if isinstance(expression.op, ast.Div) and _plain_number(expression.right, values):
        return expression.left
    return None


def _plain_number(node: ast.AST, values: dict) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, ast.Name):
        value = values.get(node.id)
    else:
        return False
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bindings(scope: ast.AST, name: str, before: int, unpacking: bool = False) -> list[ast.stmt]:
    """The `+=` / `-=` statements into `name` after its last plain assignment, then that
    assignment, all before line `before`, latest first; with `unpacking`, an assignment that
    unpacks into `name` counts as its plain assignment (read with `_bound_value`)."""
    found = [node for node in ast.walk(scope) if isinstance(node, (ast.Assign, ast.AugAssign))
             and node.lineno < before and _binds(node, name, unpacking)
             and not (node is not scope and _nested_function(scope, node))]
    found.sort(key=lambda node: node.lineno, reverse=True)
    result = []
    for node in found:
        result.append(node)
        if isinstance(node, ast.Assign):
            break
    return result


def _binds(node, name: str, unpacking: bool = False) -> bool:
    """Whether the statement assigns `name`, alone or, with `unpacking`, as an element of an
    unpacking (`value_loss, policy_loss = compute_losses()`)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets) or (unpacking and isinstance(node, ast.Assign) and any(
        isinstance(t, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == name for e in t.elts)
        for t in node.targets))


def _bound_value(statement: ast.stmt, name: str) -> ast.AST:
    """What `statement` gives `name`: its value, or in an unpacking of a tuple written out
    (`a, b = x, y`) the matching element; an unpacked call's value is the call itself (the term
    then reads as computed by it)."""
    if isinstance(statement, ast.Assign) and isinstance(statement.value, (ast.Tuple, ast.List)):
        for target in statement.targets:
            if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(statement.value.elts) \
                    and not any(isinstance(e, ast.Starred) for e in (*target.elts, *statement.value.elts)):
                for element, value in zip(target.elts, statement.value.elts):
                    if isinstance(element, ast.Name) and element.id == name:
                        return value
    return statement.value


def _nested_function(scope: ast.AST, node: ast.AST) -> bool:
    for inner in ast.walk(scope):
        if inner is not scope and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if inner.lineno <= node.lineno <= (inner.end_lineno or inner.lineno):
                return True
    return False


class Cut:
    """Where a term leaves the graph: the cutting expression (`x.item()`, `x.detach()`, `x.data`,
    `torch.autograd.grad(y, x)` without create_graph), the expression it cuts, what it makes
    ("number", "detached", "gradient"), and the statement it is in when that is not the term's
    own (a name in the term was assigned the cut earlier)."""

    def __init__(self, node: ast.AST, receiver: ast.AST, kind: str):
        self.node = node
        self.receiver = receiver
        self.kind = kind
        self.statement: ast.stmt | None = None
        # The function of the file, called in the term, that cut what it returns (`f` of
        # `mel = f(audio)`, inside which `x = x.data`); None for a cut in the term's own function.
        self.called_function: str | None = None
        # For numbers a called function appended to a list it returns as `torch.tensor(values)`: the
        # list's name, the text of the function that builds the tensor, and that call (AD206's advice).
        self.collected_into: tuple[str, str, ast.Call] | None = None
        # For a decision (argmax, a comparison) in a called function: its differentiable counterpart's
        # text (`pred[:, 1]`), when the tensor decided on is a probability that has one.
        self.expected_value: str | None = None

    @property
    def makes_number(self) -> bool:
        return self.kind == "number"


def _cut_tensor(term: ast.AST, reading: Reading, line: int) -> Cut | None:
    """The cut in `term` (on `line`) when the term surely carries no gradient and cuts a tensor
    that requires grad; None otherwise (also when the term's kind cannot be read for sure)."""
    cuts: list[Cut] = []
    if not _no_gradient(term, reading, cuts, line, 0):
        return None
    eligible = [cut for cut in cuts if cut.called_function is not None
                or _requires_grad(cut.receiver, reading.values)
                or _required_grad_before(cut, reading, line)]
    if len(eligible) > 1:
        # `w.data - w_t.data`: the term cuts several tensors; the one to give back its gradient is
        # the one an optimizer of the frame steps (`w_t`, the model being trained), not a copy
        # kept as an anchor (`w`).
        stepped = _stepped_tensors(reading.values)
        eligible.sort(key=lambda cut: not any(_read(_uncut(cut.receiver), reading.values) is tensor
                                              for tensor in stepped))
    return eligible[0] if eligible else None


def _stepped_tensors(values: dict) -> list:
    """The tensors the optimizers held by the backward() frame's names step."""
    return [tensor for value in values.values() if isinstance(value, torch.optim.Optimizer)
            for group in value.param_groups for tensor in group["params"]]


def _required_grad_before(cut: Cut, reading: Reading, line: int) -> bool:
    """`x = x.detach().item()`: the cut's own statement rebinds the name it cuts, so the frame
    now holds the number; the tensor it held is read from the name's assignment before that
    statement (a torch function of names that hold tensors requiring grad)."""
    statement = cut.statement or _assignment_at(reading.scope, line)
    rebound = _rebound_name(statement, cut)
    if rebound is None:
        return False
    earlier = _bindings(reading.scope, rebound, statement.lineno)
    if len(earlier) != 1 or not isinstance(earlier[0], ast.Assign) or _under_grad_off_block(reading.scope, earlier[0]):
        return False  # the tensor it held is not one plain assignment's, or was made without a graph
    for node in ast.walk(earlier[0].value):  # a name or attribute (`model.weight`) holding a tensor with grad
        value = _read(node, reading.values) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if isinstance(value, torch.Tensor) and value.requires_grad:
            return True
    return False


GRAD_OFF_CALLS = ("no_grad", "inference_mode", "set_grad_enabled")


def _under_grad_off_block(scope: ast.AST, statement: ast.stmt) -> bool:
    """Is `statement` inside `with torch.no_grad():` (inference_mode, set_grad_enabled) in `scope`?"""
    for node in ast.walk(scope):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.lineno < statement.lineno <= node.end_lineno \
                and any(isinstance(inner, (ast.Name, ast.Attribute))
                        and (inner.id if isinstance(inner, ast.Name) else inner.attr) in GRAD_OFF_CALLS
                        for item in node.items for inner in ast.walk(item.context_expr)):
            return True
    return False


def _assignment_at(scope: ast.AST, line: int) -> ast.Assign | None:
    return next((node for node in walk_covering(scope, line) if isinstance(node, ast.Assign) and node.lineno == line),
                None)


def _rebound_name(statement: ast.stmt | None, cut: Cut) -> str | None:
    """The name `x` of `x = <cut of x>` (`x.item()`, `float(x)`, `x.detach().item()`) whose
    value in the frame is no longer a tensor; None for any other statement."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], ast.Name) or statement.value is not cut.node:
        return None
    name = statement.targets[0].id
    receiver = _uncut(cut.receiver)
    return name if isinstance(receiver, ast.Name) and receiver.id == name else None


def _uncut(node: ast.AST) -> ast.AST:
    """`x` of `x.detach()`, `x.data`, `x.detach().data`: the tensor before any cut on the way to
    the number (what the help adds instead)."""
    while True:
        if isinstance(node, ast.Attribute) and node.attr == "data":
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and not node.keywords and node.func.attr == "detach":
            node = node.func.value
        else:
            return node


def _no_gradient(node: ast.AST, reading: Reading, cuts: list, line: int, depth: int) -> bool:
    """Does `node` (on `line`) surely carry no gradient: constants, names holding numbers or
    tensors that do not require grad, arithmetic and indexing of them, torch's functions,
    methods and modules of them, and cuts (collected into `cuts`, also from the assignment of a
    name that holds a tensor without grad)?"""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.Attribute) and node.attr == "data":
        cuts.append(Cut(node, node.value, "detached"))
        return True
    if isinstance(node, (ast.Name, ast.Attribute)):
        value = _read(node, reading.values)
        if isinstance(value, torch.Tensor):
            if value.requires_grad:
                return False
            if isinstance(node, ast.Name) and depth < MAX_DEPTH:
                cuts.extend(_cuts_in_assignment(node.id, reading, line, depth))
            return True
        return isinstance(value, (int, float))
    if isinstance(node, ast.Subscript):
        return _no_gradient(node.value, reading, cuts, line, depth)  # an index carries no gradient
    if isinstance(node, ast.BinOp):
        return (_no_gradient(node.left, reading, cuts, line, depth)
                and _no_gradient(node.right, reading, cuts, line, depth))
    if isinstance(node, ast.UnaryOp):
        return _no_gradient(node.operand, reading, cuts, line, depth)
    if isinstance(node, ast.Call):
        cut = _cut_of(node, reading.values)
        if cut is not None:
            cuts.append(cut)
            return True
        numpy_cuts = _numpy_cuts(node, reading, line)
        if numpy_cuts:
            cuts.extend(numpy_cuts)
            return True
        return _call_without_gradient(node, reading, cuts, line, depth)
    return False


def _cuts_in_assignment(name: str, reading: Reading, line: int, depth: int) -> list[Cut]:
    """The cuts in the plain assignment that gave `name` (a tensor without grad) its value, or in
    the function of this file whose returned tuple an assignment unpacks into `name`."""
    bindings = _bindings(reading.scope, name, line)
    if not bindings:
        unpacked = _bindings(reading.scope, name, line, unpacking=True)
        return _numbers_collected_in_call(name, unpacked[0], reading) if len(unpacked) == 1 else []
    if len(bindings) != 1 or not isinstance(bindings[0], ast.Assign) or len(bindings[0].targets) != 1:
        return []
    statement = bindings[0]
    found: list[Cut] = []
    if not _no_gradient(statement.value, reading, found, statement.lineno, depth + 1):
        return []
    for cut in found:
        cut.statement = cut.statement or statement
    return found


# torch's functions that build a tensor from a list of numbers (read by name: a doctor may wrap them).
TENSOR_FROM_LIST = ("tensor", "as_tensor", "Tensor", "FloatTensor")


def _numbers_collected_in_call(name: str, statement: ast.stmt, reading: Reading) -> list[Cut]:
    """`a, b = f(model, x)`, f a function of this file given something that requires grad (a tensor,
    a module with trainable parameters), whose one return gives `name` `torch.tensor(values)` of a
    list every append to which is a number cut from a tensor (`values.append(v.item())`, not under
    a no_grad block): those cuts, with the append as their statement. Empty for anything else."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], (ast.Tuple, ast.List)) or not isinstance(statement.value, ast.Call):
        return []
    elements, call = statement.targets[0].elts, statement.value
    names = [element.id if isinstance(element, ast.Name) else None for element in elements]
    function = _read(call.func, reading.values) if isinstance(call.func, ast.Name) else None
    code = getattr(function, "__code__", None)
    if code is None or code.co_filename != reading.filename or names.count(name) != 1:
        return []
    definition = function_definition(code)
    if not isinstance(definition, ast.FunctionDef):
        return []
    global_values = getattr(function, "__globals__", {})
    globals_read = {node.id: global_values[node.id] for node in ast.walk(definition)
                    if isinstance(node, ast.Name) and node.id in global_values and node.id not in code.co_varnames}
    if not any(_requires_grad(argument, reading.values) for argument in [*call.args, *(k.value for k in call.keywords)]) \
            and not any(_requires_grad(ast.Name(id=read, ctx=ast.Load()), globals_read) for read in globals_read):
        return []  # nothing it is given or reads (a model, a tensor) has a gradient to lose
    returns = [node for node in ast.walk(definition) if isinstance(node, ast.Return)
               and not _nested_function(definition, node)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Tuple) or len(returns[0].value.elts) != len(names):
        return []
    built = returns[0].value.elts[names.index(name)]
    if not (isinstance(built, ast.Call) and len(built.args) == 1 and isinstance(built.args[0], ast.Name)
            and isinstance(built.func, ast.Attribute) and built.func.attr in TENSOR_FROM_LIST
            and _read(built.func.value, global_values) is torch):
        return []
    collected = built.args[0].id
    appends = [node for node in ast.walk(definition) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
               and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "append"
               and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == collected]
    cuts = []
    for append in appends:
        arguments = append.value.args
        cut = _cut_of(arguments[0], {}) if len(arguments) == 1 and isinstance(arguments[0], ast.Call) else None
        if cut is None or not cut.makes_number or _under_grad_off_block(definition, append):
            return []  # some other value goes into the list too, or none needed a gradient
        cut.statement, cut.called_function = append, definition.name
        cut.collected_into = (collected, segment(reading.filename, built.func) or ast.unparse(built.func), built)
        cuts.append(cut)
    return cuts[:1]


def _numpy_cuts(call: ast.Call, reading: Reading, line: int) -> list[Cut]:
    """`name = f(h.cpu().detach().numpy(), ...)` on `line`, where the frame shows `name` holding a
    plain number: f computed it with numpy from a copy of a tensor's values, so it has no gradient
    whatever f does. The cuts are those copies (none when the call is anything else)."""
    statement = _assignment_at(reading.scope, line)
    if statement is None or statement.value is not call or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], ast.Name):
        return []
    value = reading.values.get(statement.targets[0].id)
    numpy_value = type(value).__module__ == "numpy"  # np.float32 is no Python float; an array has no grad either
    if not (numpy_value or isinstance(value, (int, float))) or isinstance(value, bool):
        return []
    found = []
    for argument in [*call.args, *(keyword.value for keyword in call.keywords)]:
        for node in ast.walk(argument):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy"):
                continue
            receiver = node.func.value  # `h.cpu().detach()`: the cut is the detach() on the way
            while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) \
                    and receiver.func.attr in ("cpu", "detach", "clone", "float", "double"):
                receiver = receiver.func.value
            if receiver is not node.func.value:
                cut = Cut(node, receiver, "numpy")
                cut.statement = statement
                found.append(cut)
    return found


def _cut_of(call: ast.Call, values: dict) -> Cut | None:
    if isinstance(call.func, ast.Attribute) and not call.args and not call.keywords:
        if call.func.attr == "item":
            return Cut(call, call.func.value, "number")
        if call.func.attr == "detach":
            return Cut(call, call.func.value, "detached")
    if isinstance(call.func, ast.Name) and call.func.id == "float" and len(call.args) == 1 and not call.keywords:
        return Cut(call, call.args[0], "number")
    if (isinstance(call.func, (ast.Name, ast.Attribute)) and _read(call.func, values) is torch.autograd.grad
            and call.args and not any(k.arg in ("create_graph", None) for k in call.keywords)):
        return Cut(call, call.args[0], "gradient")  # its result is outside any graph
    return None


def _call_without_gradient(call: ast.Call, reading: Reading, cuts: list, line: int, depth: int) -> bool:
    """A call whose result has no gradient when its arguments have none: a method of a tensor
    without gradient, a function of torch, or one of torch's own modules without trainable
    parameters (a loss such as nn.BCELoss)."""
    values = reading.values
    arguments = list(call.args) + [keyword.value for keyword in call.keywords]
    if any(keyword.arg == "requires_grad" for keyword in call.keywords):
        return False
    if any(isinstance(argument, ast.Starred) for argument in arguments):
        return False
    function = call.func
    if _torch_function(function, values) or _torch_module_without_parameters(function, values):
        pass
    elif _new_torch_loss(function, reading, cuts, line, depth):
        pass  # `nn.MSELoss()(a, b)`: a loss module made on the spot, applied at once
    elif _called_module_cut(call, reading, cuts):
        return True  # a frozen module of this file whose forward turns gradients off around its input
    elif _called_function_cut(call, reading, cuts, depth):
        return True  # a function of this file given tensors with gradient returns one cut from the graph
    elif not (isinstance(function, ast.Attribute) and _no_gradient(function.value, reading, cuts, line, depth)):
        return False  # not a method of something without gradient either: unknown
    # An option (`keepdim=True`, `reduction="sum"`, `dim=None`) carries no gradient either.
    return all(isinstance(argument, ast.Constant) or _no_gradient(argument, reading, cuts, line, depth)
               for argument in arguments)


def _called_function_cut(call: ast.Call, reading: Reading, cuts: list, depth: int) -> bool:
    """`f(...)`, f a function of this file that returns a value computed from an explicit cut
    (`h = h.data`, `h.detach()`) of what it computed: its result has no gradient. When an argument
    carries gradient, the cut inside f is what took it (collected into `cuts`, with f's statement).
    False for anything else."""
    function = _read(call.func, reading.values) if isinstance(call.func, ast.Name) else None
    code = getattr(function, "__code__", None)
    if code is None or depth >= MAX_DEPTH or code.co_filename != reading.filename:
        return False
    arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
    carried = any(isinstance(node, (ast.Name, ast.Attribute)) and _requires_grad(node, reading.values)
                  for argument in arguments for node in ast.walk(argument))
    definition = function_definition(code)
    if not isinstance(definition, ast.FunctionDef):
        return False
    for statement in sorted((node for node in ast.walk(definition) if isinstance(node, ast.Assign)),
                            key=lambda node: node.lineno):
        # Only a cut of the whole value (`h = h.data`, `h = f(x).detach()`): a cut input given to a
        # module (`netD(fake.detach())`) still has the module's gradient.
        value = statement.value
        cut = (Cut(value, value.value, "detached") if isinstance(value, ast.Attribute) and value.attr == "data"
               else _cut_of(value, {}) if isinstance(value, ast.Call) else None)
        if cut is not None and cut.kind != "detached":
            cut = None
        if cut is not None and _returned_from(definition, statement, getattr(function, "__globals__", {})):
            cut.statement, cut.called_function = statement, definition.name
            if carried:
                cuts.append(cut)
            return True
    decision = decision_cuts.decision_cut(definition, function, call,
                                          lambda argument: _requires_grad(argument, reading.values)) if carried else None
    if decision is None:
        return False
    # An argmax or a comparison inside f: what f returns is integer-valued where the decision is.
    cut = Cut(decision.node, decision.receiver, "decision")
    cut.statement, cut.called_function = decision.statement, definition.name
    parameter = decision_cuts.decided_parameter(definition, decision)
    given = call_argument(call, [a.arg for a in definition.args.args].index(parameter), parameter) \
        if parameter is not None else None
    receiver_text = segment(reading.filename, decision.receiver) or ast.unparse(decision.receiver)
    cut.expected_value = decision_cuts.expected_value_text(
        decision, _read(given, reading.values) if given is not None else None, receiver_text)
    cuts.append(cut)
    return True


def _called_module_cut(call: ast.Call, reading: Reading, cuts: list) -> bool:
    """`encoder(audio)`, `encoder` a module of this file none of whose parameters requires grad,
    whose forward ran a `with torch.no_grad():` block (the run entered it) that reads forward's
    own input: whatever the module returns has no gradient, since its only source, the input, is
    read with gradients off. When an argument requires grad, that block is what took its gradient
    (collected into `cuts`, with the block as the cut's statement). False for anything else."""
    module = _read(call.func, reading.values) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if not isinstance(module, torch.nn.Module) or any(p.requires_grad for p in module.parameters()):
        return False
    code = getattr(type(module).forward, "__code__", None)
    if code is None or code.co_filename != reading.filename:
        return False
    definition = function_definition(code)
    if not isinstance(definition, ast.FunctionDef):
        return False
    inputs = {argument.arg for argument in definition.args.args[1:]}
    entered = {(entry.filename, entry.line) for kind in GRAD_OFF_CALLS[:2] for entry in switches.mode_entries(kind)}
    block = next((node for node in ast.walk(definition) if isinstance(node, ast.With)
                  and (reading.filename, node.lineno) in entered and _grad_off_header(node)
                  and any(isinstance(name, ast.Name) and name.id in inputs for name in ast.walk(node))), None)
    if block is None or not _block_result_returned(definition, block):
        return False
    carrying = [argument for argument in [*call.args, *(keyword.value for keyword in call.keywords)]
                if _requires_grad(argument, reading.values)]
    if carrying:
        cut = Cut(block, carrying[0], "grad_off")
        cut.statement, cut.called_function = block, f"{type(module).__name__}.forward"
        cuts.append(cut)
    return True


def _block_result_returned(definition: ast.FunctionDef, block: ast.With) -> bool:
    """Whether forward returns what the block computes: a `return` inside it, or names it binds
    that the returned value is computed from. A block that only updates state (a DINO centre's
    `self.center.mul_(0.9).add_(...)`) leaves the module's result with its gradient."""
    if any(isinstance(node, ast.Return) for node in ast.walk(block)):
        return True
    bound = _names_bound(block)
    return bool(bound) and flows_to_return(definition, block, bound, _names_bound)


def _names_bound(node: ast.AST) -> set:
    """The plain names that the assignments in `node` (or `node` itself) bind."""
    targets = [target for statement in ast.walk(node) if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign))
               for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])]
    return {name for target in targets for name in stored_names(target)}


def _grad_off_header(block: ast.With) -> bool:
    """`with torch.no_grad():` / `with torch.inference_mode():`: one context manager, no name bound."""
    if len(block.items) != 1 or block.items[0].optional_vars is not None:
        return False
    header = block.items[0].context_expr
    function = header.func if isinstance(header, ast.Call) else None
    name = function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) \
        else None
    return name in GRAD_OFF_CALLS[:2] and not header.args


def _returned_from(function: ast.FunctionDef, statement: ast.Assign, global_values: dict) -> bool:
    """Whether what `function` returns is computed from the names `statement` binds (through the
    assignments after it) and from nothing that could carry a gradient: each step reads only
    those names, the function's globals that are not tensors requiring grad, and torch's
    functions and tensor methods (a module or another function could add a gradient: unknown)."""
    return flows_to_return(function, statement, _target_names(statement), _target_names,
                           lambda value, carriers: _gradient_free_step(value, carriers, global_values))


def _target_names(node: ast.Assign | ast.AugAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}


def _gradient_free_step(expression: ast.AST, carriers: set, global_values: dict) -> bool:
    for node in ast.walk(expression):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) or (isinstance(function, ast.Attribute)
                                                  and not _torch_function(function, global_values)
                                                  and _root_name(function) not in carriers):
                return False  # a module, a function of the program, a method of another object
        if isinstance(node, ast.Name) and node.id not in carriers:
            value = global_values.get(node.id, _MISSING)
            if value is _MISSING or (isinstance(value, torch.Tensor) and value.requires_grad):
                return False  # a local of unknown origin, or a global that carries a gradient
    return True


_MISSING = object()


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _torch_function(function: ast.AST, values: dict) -> bool:
    """`torch.abs`, `F.mse_loss`, `torch.nn.functional.l1_loss`: an attribute of a torch module."""
    if not isinstance(function, ast.Attribute):
        return False
    owner = function.value
    while isinstance(owner, ast.Attribute):
        owner = owner.value
    if not isinstance(owner, ast.Name):
        return False
    module = _read(function.value, values)
    return isinstance(module, types.ModuleType) and module.__name__.split(".")[0] == "torch"


def _torch_module_without_parameters(function: ast.AST, values: dict) -> bool:
    module = _read(function, values) if isinstance(function, (ast.Name, ast.Attribute)) else None
    return (isinstance(module, torch.nn.Module) and type(module).__module__.startswith("torch.nn.")
            and not any(True for _ in module.parameters()) and not any(True for _ in module.buffers()))


def _new_torch_loss(function: ast.AST, reading: Reading, cuts: list, line: int, depth: int) -> bool:
    """`nn.MSELoss()` or `nn.CrossEntropyLoss(weight=w)` as the called function: one of torch's
    loss modules (they hold no trainable parameters), made from arguments without gradient."""
    if not isinstance(function, ast.Call) or not isinstance(function.func, (ast.Name, ast.Attribute)):
        return False
    made = _read(function.func, reading.values)
    if not (isinstance(made, type) and issubclass(made, torch.nn.modules.loss._Loss)
            and made.__module__.startswith("torch.nn.")):
        return False
    arguments = list(function.args) + [keyword.value for keyword in function.keywords]
    return not any(isinstance(argument, ast.Starred) for argument in arguments) and all(
        _no_gradient(argument, reading, cuts, line, depth) for argument in arguments)


def _read(node: ast.AST, values: dict):
    """A name's or plain attribute chain's value from the frame (getattr only, nothing called)."""
    if isinstance(node, ast.Name):
        return values.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _read(node.value, values)
        if owner is None or isinstance(owner, torch.Tensor):
            return None
        return attribute_without_running_code(owner, node.attr)
    return None


def _requires_grad(receiver: ast.AST, values: dict) -> bool:
    """The receiver is (or is computed from) a tensor that requires grad: its names are read from
    the frame, nothing is evaluated."""
    for node in ast.walk(receiver):
        if isinstance(node, ast.Name):
            value = values.get(node.id)
            if isinstance(value, torch.Tensor) and value.requires_grad:
                return True
            if isinstance(value, torch.nn.Module) and any(p.requires_grad for p in value.parameters()):
                return True
    return False


def _kept_beside(cut: Cut, term: ast.AST, terms: list) -> bool:
    """`x - x.detach()` (a term that keeps the gradient of `x` and removes its value, as in
    DiCE or a straight-through estimator): the detached copy is there on purpose."""
    if cut.kind != "detached":
        return False
    cut_text = ast.dump(cut.receiver)
    return any(other is not term and any(ast.dump(node) == cut_text for node in ast.walk(other))
               for other, _ in terms)


def _diagnosis(site: Site, holder: ast.stmt | None, term: ast.AST, cut: Cut, scope: ast.AST) -> Diagnosis:
    filename = site.filename
    holder = holder or statement_at(filename, site.lineno)
    statement = cut.statement or holder  # where the cut is: the term's line, or a name's assignment
    converted = (segment(filename, cut.node.items[0].context_expr) if cut.kind == "grad_off"
                 else segment(filename, cut.node)) or ast.unparse(cut.node)
    tensor = _uncut(cut.receiver)
    tensor_text = segment(filename, tensor) or ast.unparse(tensor)
    if cut.kind == "grad_off":
        return _grad_off_diagnosis(site, holder, cut, converted, tensor_text)
    made = {"number": "a Python number", "detached": "a tensor cut from the graph",
            "gradient": "gradients outside any graph (no create_graph=True)",
            "numpy": "a numpy copy of the values, outside the graph",
            "decision": "a decision (indices or booleans), which has no gradient"}[cut.kind]
    location = statement_location(filename, statement, role="number", note=f"{converted} is {made}: the term "
                                  "adds to the loss's value but has no gradient")
    rebound = _rebound_name(statement, cut) if cut.called_function is None else None
    related = []
    adding = _first_reader(filename, statement, site, scope, rebound) if rebound is not None else None
    if adding is not None:
        related.append(statement_location(filename, adding, role="term", note=f"the number {rebound} is added to "
                                          "the loss here"))
    if cut.called_function is not None:
        related.append(statement_location(filename, holder, role="called from", note=f"the term is computed through "
                                          f"{cut.called_function}(), which returns a value cut from the graph"))
    elif statement is not holder:
        related.append(statement_location(filename, holder, role="term", note="the term made from it, added to the "
                                          "loss"))
    backward = statement_location(filename, statement_at(filename, site.lineno), role="backward",
                                  note="backward() of a loss that includes the term")
    if backward.line != location.line:
        related.append(backward)
    if cut.kind == "numpy":
        # No change is written: the function that computes the term from the copy must itself be
        # written with torch operations, which only its author can do.
        help_ = Suggestion(f"compute this term with torch operations on {tensor_text} itself (the same function "
                           f"written with torch instead of numpy), so that it is differentiable and trains what "
                           f"{tensor_text} is computed from; keep the numpy version for logging only")
    elif cut.kind == "decision":
        help_ = _decision_help(filename, statement, cut, converted, tensor_text)
    elif cut.collected_into is not None:
        collected, builder, built = cut.collected_into
        # Two lines change (the append and the build), and the tensor may need a reshape to the
        # number's shape: advice, naming both.
        help_ = Suggestion(f"keep the tensor in the list: append {tensor_text}.squeeze() (the tensor, with the "
                           f"number's shape) instead of {converted} here, and build the result with "
                           f"torch.stack({collected}) instead of {builder}({collected}) at line {built.lineno} of "
                           f"{cut.called_function}(), so the term trains what {tensor_text} is computed from; keep "
                           ".item() / float() for logging only")
    elif rebound is not None:
        help_ = _move_after_backward(filename, statement, statement_at(filename, site.lineno), scope, rebound,
                                     converted)
    else:
        help_ = _help(filename, statement, cut, tensor, converted, tensor_text)
    if cut.kind == "number":
        cause = (f"{tensor_text} requires grad, but {converted} turns it into a plain number: added to the loss, a "
                 "number shifts the loss value and contributes no gradient")
    elif cut.kind == "numpy":
        cause = (f"{tensor_text} requires grad, but {converted} hands a copy of its values to numpy, and the term is "
                 "computed from that copy: added to the loss, a number shifts the loss value and contributes no "
                 "gradient")
    elif cut.kind == "decision":
        cause = (f"{tensor_text} requires grad, but {converted} is a hard decision on it: indices and comparisons "
                 f"have no graph, and {cut.called_function}() computes its result from that decision and from "
                 "nothing else that carries a gradient: added to the loss, the term shifts the loss value and "
                 "contributes no gradient")
    elif cut.kind == "detached":
        cause = (f"{tensor_text} requires grad, but {converted} cuts it from the graph, and nothing else in the term "
                 "carries a gradient: added to the loss, the term shifts the loss value and contributes no gradient")
    else:
        cause = (f"{tensor_text} requires grad, but torch.autograd.grad without create_graph=True returns gradients "
                 "that are not part of any graph, and nothing else in the term carries a gradient: added to the loss "
                 "(a gradient penalty), the term shifts the loss value and contributes no gradient")
    notes = [cause + ", so whatever computed it is not trained by this term"]
    return Diagnosis(code=codes.NUMBER_TERM_IN_LOSS, title=codes.title(codes.NUMBER_TERM_IN_LOSS), severity="warning",
                     primary=location, related=related, notes=notes, help=[help_] if help_ is not None else [])


def _grad_off_diagnosis(site: Site, holder: ast.stmt, cut: Cut, header: str, tensor_text: str) -> Diagnosis:
    """AD206 for a term computed by a frozen module whose forward reads its input with gradients
    off: the line to change is the block; the help runs its body with gradients on (the module's
    parameters stay frozen, so nothing else starts training)."""
    from autograd_doctor.analysis.grad_off_blocks import block_body_dedented

    filename, block = site.filename, cut.node
    location = statement_location(filename, block, role="number",
                                  note=f"{cut.called_function}() reads its input under {header}: what it returns "
                                       "has no gradient, so the term adds to the loss's value but trains nothing")
    location.end_line, location.end_column = location.line, None
    related = [statement_location(filename, holder, role="called from",
                                  note=f"the term is computed through {cut.called_function}() from {tensor_text}, "
                                       "which requires grad")]
    backward = statement_location(filename, statement_at(filename, site.lineno), role="backward",
                                  note="backward() of a loss that includes the term")
    if backward.line != holder.lineno:
        related.append(backward)
    body = block_body_dedented(filename, block)
    message = (f"run this block with gradients on: {tensor_text} then carries its gradient through "
               f"{cut.called_function}() into the term (the module's own parameters stay frozen; keep {header} "
               "only where the module evaluates)")
    help_ = Suggestion(message, body, statement_location(filename, block)) if body is not None else Suggestion(message)
    notes = [f"{tensor_text} requires grad, but {cut.called_function}() computes from it under {header}, and its own "
             "parameters are frozen, so nothing in the term carries a gradient: added to the loss, the term shifts "
             "the loss value and contributes no gradient, so whatever computed it is not trained by this term"]
    return Diagnosis(code=codes.NUMBER_TERM_IN_LOSS, title=codes.title(codes.NUMBER_TERM_IN_LOSS), severity="warning",
                     primary=location, related=related, notes=notes, help=[help_])


def _help(filename: str, statement: ast.stmt, cut: Cut, tensor: ast.AST, converted: str, tensor_text: str
          ) -> Suggestion | None:
    """The statement with the cut undone: the tensor itself instead of its number or detached
    copy, or the gradients computed with create_graph=True."""
    if cut.kind == "gradient":
        if not converted.endswith(")"):
            return None
        replaced = replace_node_text(filename, statement, cut.node, converted[:-1].rstrip().rstrip(",")
                                     + ", create_graph=True)")
        message = ("compute the gradients with create_graph=True, so that the term made from them is "
                   "differentiable and trains what they were computed from")
    else:
        replaced = replace_node_text(filename, statement, cut.node, tensor_text if isinstance(
            tensor, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({tensor_text})")
        keep = ("keep .item() / float() for logging only" if cut.kind == "number" else
                "detach only an input that must not be trained (a target), not the whole term")
        message = f"add the tensor itself, so the term trains what it is computed from: {keep}"
    if replaced is None:
        return None
    return Suggestion(message, replaced, statement_location(filename, statement))


def _decision_help(filename: str, statement: ast.stmt, cut: Cut, converted: str, tensor_text: str) -> Suggestion:
    """The decision replaced by its expected value where the tensor decided on is a probability
    (over two classes of a softmax, or a sigmoid's against 0.5); advice anywhere else."""
    if cut.expected_value is not None:
        replaced = replace_node_text(filename, statement, cut.node, cut.expected_value)
        if replaced is not None:
            what = ("the probability of class 1" if cut.expected_value != tensor_text
                    else "the probability itself")
            return Suggestion(f"use {what}, {cut.expected_value}, instead of {converted}: it is the decision's "
                              f"expected value and differentiable, so the term trains what {tensor_text} is "
                              "computed from (keep the hard decision for metrics only)",
                              replaced, statement_location(filename, statement))
    return Suggestion(f"compute the term from a differentiable value instead of {converted} (the probabilities "
                      f"{tensor_text} is decided from, such as a softmax's or a sigmoid's), or drop the term: as "
                      "written it trains nothing")


def _move_after_backward(filename: str, statement: ast.stmt, backward: ast.stmt | None, scope: ast.AST, name: str,
                         converted: str) -> Suggestion | None:
    """`x = x.detach().item()` before the loss is built: the statement moved to just after the
    backward() statement, so that the loss adds the tensor and every use after backward() (a
    log, a list of values) still gets the number. Only when both are statements of one block
    and what reads `x` between them are assignments (the loss being built), nothing else."""
    block = block_holding(scope, statement)
    if backward is None or block is None or backward not in block or block.index(backward) < block.index(statement):
        return None
    between = block[block.index(statement) + 1: block.index(backward)]
    for other in between:
        reads = any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(other))
        if reads and not isinstance(other, (ast.Assign, ast.AugAssign)):
            return None
    indent = source_line(filename, statement.lineno)[:statement.col_offset]
    lines = []
    for moved in [*between, backward, statement]:
        for number in range(moved.lineno, moved.end_lineno + 1):
            line = source_line(filename, number).rstrip()
            if line.strip() and not line.startswith(indent):
                return None
            lines.append(line[len(indent):])
    location = statement_location(filename, statement)
    location.end_line, location.end_column = backward.end_lineno, backward.end_col_offset
    return Suggestion(f"run `{name} = {converted}` after backward(), not before the loss is built: the loss then "
                      f"adds the tensor {name} (the term trains what computed it), and the uses after backward() "
                      "still get the number", "\n".join(lines), location)


def _first_reader(filename: str, statement: ast.stmt, site: Site, scope: ast.AST, name: str) -> ast.stmt | None:
    """The first assignment after `statement`, up to the backward() line, that reads `name`."""
    readers = [node for node in ast.walk(scope) if isinstance(node, (ast.Assign, ast.AugAssign))
               and statement.end_lineno < node.lineno <= site.lineno
               and any(isinstance(inner, ast.Name) and inner.id == name and isinstance(inner.ctx, ast.Load)
                       for inner in ast.walk(node.value))]
    return min(readers, key=lambda node: node.lineno, default=None)
