"""Concrete out-of-place changes, built from the user's own source statement.

Each builder takes the statement that did the write and returns `Suggestion`s whose
`replacement` is code that replaces that whole statement (same indentation), so a
user (or a test) can apply it directly.
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize
import types

import torch

from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import (
    call_name, parse_quietly, replace_node_text, segment, statement_location,
)

AUGMENTED_OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
    ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}
# In-place methods whose out-of-place twin is not simply the name without "_".
OUT_OF_PLACE_SPECIAL = {
    "zero_": lambda target, args: f"torch.zeros_like({target})",
    "fill_": lambda target, args: f"torch.full_like({target}, {args})",
    "copy_": lambda target, args: f"({args}).expand_as({target}).clone()",
}


class WriteFacts:
    """What the run time knew about a write, to choose the right out-of-place form."""

    def __init__(self, value_is_scalar: bool | None = None, index_is_bool_mask: bool = False,
                 floating: bool = True, container_element: bool = False):
        self.value_is_scalar = value_is_scalar
        self.index_is_bool_mask = index_is_bool_mask
        self.floating = floating
        # `laterals[i] += v` where `laterals` is a list: `+=` wrote into a whole tensor (not a
        # view of one), so the subscript picked an element of a Python container.
        self.container_element = container_element
        # `t[index] = v`: what each part of the index was at run time (calls.index_kinds);
        # None when not seen.
        self.index_kinds: tuple[str, ...] | None = None
        # `c[k][index] = v` into a whole tensor: the kinds of the Python containers named on the
        # line at run time ({"c": "tuple"}).
        self.container_kinds: dict[str, str] = {}
        # `t[mask] = v`: how many trailing dimensions of `t` a boolean mask lacks (it indexes the
        # leading ones); None when not seen (calls.mask_missing_dims).
        self.mask_missing_dims: int | None = None


def _statement_text(filename: str, statement: ast.stmt) -> str:
    return segment(filename, statement) or ""


def _format_scalar(node: ast.AST, text: str, floating: bool) -> str:
    value = None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        value = node.value
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        if isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
            value = -node.operand.value
    if value is not None and floating and isinstance(value, int):
        return f"{float(value)!r}"
    return text


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_number(node.operand)
    return False


def _plain(node: ast.AST) -> bool:
    """A name the user can rebind: `h`, `self.h` (not `h[0]`, not `y.view(-1)`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _written_chain(node: ast.AST):
    """The expressions a write goes through, outermost first: `y.view(-1)[0]`, `y.view(-1)`,
    `y` (each index and each method call's receiver)."""
    while True:
        yield node
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return


def _root_tensor(node: ast.AST) -> ast.AST | None:
    """The rebindable tensor that `node` writes into: `y` for `y.view(-1)[0]`, `h` for `h[0]`."""
    *_, root = _written_chain(node)
    return root if _plain(root) else None


CLONE_FIRST = "write into a copy, so the saved tensor stays intact (the copy is still in the graph)"


def _container_entry(node: ast.AST, container_kinds: dict[str, str]) -> ast.Subscript | None:
    """`c[k]` in `c[k][:, j]` when `c` named a tuple, list or dict at run time: the tensor
    written is an entry of a Python container, not a view of a tensor `c`."""
    return next((part for part in _written_chain(node)
                 if isinstance(part, ast.Subscript) and isinstance(part.value, ast.Name)
                 and part.value.id in container_kinds), None)


def _put_back(container: str, kind: str, key: ast.AST, key_text: str, copy_name: str) -> str:
    """The statement that makes the container hold the copy: a tuple cannot be assigned into,
    so it is rebuilt around the copy."""
    if kind != "tuple":
        return f"{container}[{key_text}] = {copy_name}"
    if isinstance(key, ast.Constant) and key.value == 0:
        return f"{container} = ({copy_name}, *{container}[1:])"
    return f"{container} = (*{container}[:{key_text}], {copy_name}, *{container}[{key_text} + 1:])"


def _container_entry_copy_fix(filename: str, statement: ast.stmt, entry: ast.Subscript, kind: str,
                              message: str) -> list[Suggestion]:
    """`c[k][index] = v` -> copy the entry, write into the copy, put the copy into `c`."""
    entry_text, container, key_text = (segment(filename, entry), segment(filename, entry.value),
                                       segment(filename, entry.slice))
    if None in (entry_text, container, key_text):
        return []
    suffix = key_text if key_text.isidentifier() or key_text.isdigit() else "entry"
    if isinstance(entry.slice, ast.Constant) and isinstance(entry.slice.value, str) and entry.slice.value.isidentifier():
        suffix = entry.slice.value  # `batch["reward"]` -> `batch_reward`
    copy_name = _unused_name(filename, f"{container}_{suffix}")
    written = replace_node_text(filename, statement, entry, copy_name)
    if written is None:
        return []
    return [Suggestion(
        message,
        f"{copy_name} = {entry_text}.clone()\n{written}\n{_put_back(container, kind, entry.slice, key_text, copy_name)}",
        statement_location(filename, statement), keeps_write=True,
    )]


def clone_first_fix(filename: str, statement: ast.stmt, written: ast.AST,
                    message: str = CLONE_FIRST, container_kinds: dict[str, str] | None = None) -> list[Suggestion]:
    """Keep the write but make it on a copy: `root = root.clone()` before the statement.
    These suggestions keep the write (`keeps_write`): they do not fit every diagnosis."""
    entry = _container_entry(written, container_kinds) if container_kinds else None
    if entry is not None:
        return _container_entry_copy_fix(filename, statement, entry, container_kinds[entry.value.id], message)
    root = _root_tensor(written)
    root_text = segment(filename, root) if root is not None else None
    if root_text is None:
        return []
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and _reads(statement.value, root):
        # `T[b][t] = conv(T[b][t])`: the right side reads the tensor it writes into, and what it
        # saves of it (the convolution's input) must stay intact too. A copy made before the
        # statement would be read and written by it alike, so the value is computed first.
        value_text, target_text = segment(filename, statement.value), segment(filename, statement.targets[0])
        if value_text is None or target_text is None:
            return []
        value_name = _unused_name(filename, f"new_{root_text.split('.')[-1]}")
        return [Suggestion(
            message, f"{value_name} = {value_text}\n{root_text} = {root_text}.clone()\n{target_text} = {value_name}",
            statement_location(filename, statement), keeps_write=True,
        )]
    return [Suggestion(
        message, f"{root_text} = {root_text}.clone()\n{_statement_text(filename, statement)}",
        statement_location(filename, statement), keeps_write=True,
    )]


def _reads(expression: ast.AST, root: ast.AST) -> bool:
    """`expression` reads the tensor `root` names (`T` in `conv(T[b][t])`, `self.h` in `self.h * 2`)."""
    wanted = ast.dump(root)
    return any(ast.dump(node) == wanted for node in ast.walk(expression))


def _unused_name(filename: str, name: str) -> str:
    """`name`, or `name_2`, ... : one the file does not use yet."""
    try:
        with open(filename, encoding="utf-8") as stream:
            used = {node.id for node in ast.walk(parse_quietly(stream.read(), filename)) if isinstance(node, ast.Name)}
    except (OSError, SyntaxError, ValueError):
        return name
    candidate, number = name, 2
    while candidate in used:
        candidate, number = f"{name}_{number}", number + 1
    return candidate


def _is_comparison(index: ast.AST) -> bool:
    """`h > 0.5`, `(a > 0) & (b < 1)`, `~mask`: an index that is a boolean mask by its form."""
    if isinstance(index, ast.Compare):
        return True
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_comparison(index.left) or _is_comparison(index.right)
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return True
    return False


def _index_parts(index: ast.AST) -> list[ast.AST]:
    return list(index.elts) if isinstance(index, ast.Tuple) else [index]


def _is_full_slice(node: ast.AST) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _is_integer_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def _index_parts_match(parts: list[ast.AST], kinds: tuple[str, ...] | None) -> bool:
    """The index as written has the parts it had at run time (`t[index]` with `index` a
    tuple has one part written and several at run time: no per-dimension rewrite fits)."""
    return kinds is None or len(kinds) == len(parts)


def subscript_assignment_fixes(filename: str, statement: ast.Assign, facts: WriteFacts) -> list[Suggestion]:
    """`t[index] = value` -> index_fill / select_scatter / slice_scatter / torch.where."""
    target = statement.targets[0]
    assert isinstance(target, ast.Subscript)
    if not _plain(target.value):
        # `y.view(-1)[0] = v`, `h[0][1] = v`
        return clone_first_fix(filename, statement, target, container_kinds=facts.container_kinds)
    base = segment(filename, target.value)
    value = segment(filename, statement.value)
    if base is None or value is None:
        return []
    location = statement_location(filename, statement)
    suggestions: list[Suggestion] = []
    index = target.slice
    value_is_scalar = facts.value_is_scalar if facts.value_is_scalar is not None else _is_number(statement.value)
    scalar_text = _format_scalar(statement.value, value, facts.floating)

    missing = facts.mask_missing_dims or 0
    if (facts.index_is_bool_mask or _is_comparison(index)) and (value_is_scalar or not missing):
        # (a tensor written through a mask of fewer dimensions holds the selected rows only:
        # torch.where cannot place them, and only the copy below is offered)
        mask = segment(filename, index)
        if missing and mask is not None:
            # `out[pad] = 0.0` with pad [B, T] and out [B, T, D]: the mask selects rows, and
            # torch.where aligns trailing dimensions, so the mask gets them as size-1 axes.
            if not isinstance(index, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
                mask = f"({mask})"
            mask = f"{mask}[..., {', '.join(['None'] * missing)}]"
        suggestions.append(Suggestion(
            "select with torch.where instead of writing through the mask",
            f"{base} = torch.where({mask}, {scalar_text if value_is_scalar else value}, {base})",
            location,
        ))
    else:
        parts = _index_parts(index)
        # Exactly one non-trivial index, all others full slices: a write along one dimension.
        interesting = [(dim, part) for dim, part in enumerate(parts) if not _is_full_slice(part)]
        if (len(interesting) == 1 and _index_parts_match(parts, facts.index_kinds)
                and not any(isinstance(p, (ast.Starred,)) or (isinstance(p, ast.Constant) and p.value is Ellipsis)
                            for p in parts)):
            dim, part = interesting[0]
            runtime_kind = facts.index_kinds[dim] if facts.index_kinds is not None else None
            if isinstance(part, ast.Slice):
                start = segment(filename, part.lower) if part.lower is not None else "0"
                stop = segment(filename, part.upper) if part.upper is not None else f"{base}.shape[{dim}]"
                if part.step is None:
                    if value_is_scalar:
                        suggestions.append(Suggestion(
                            "fill the slice out of place",
                            f"{base} = {base}.index_fill({dim}, torch.arange({start}, {stop}), {scalar_text})",
                            location,
                        ))
                    else:
                        suggestions.append(Suggestion(
                            "build the new tensor with slice_scatter",
                            f"{base} = {base}.slice_scatter({value}, dim={dim}, start={start}, end={stop})",
                            location,
                        ))
            elif not isinstance(part, (ast.List, ast.Tuple)) and (
                    runtime_kind == "int" or (runtime_kind is None and _is_integer_literal(part))):
                position = segment(filename, part)
                if value_is_scalar:
                    suggestions.append(Suggestion(
                        "fill the entry out of place",
                        f"{base} = {base}.index_fill({dim}, torch.tensor([{position}]), {scalar_text})",
                        location,
                    ))
                else:
                    suggestions.append(Suggestion(
                        "build the new tensor with select_scatter",
                        f"{base} = {base}.select_scatter({value}, {dim}, {position})",
                        location,
                    ))
    suggestions.extend(clone_first_fix(
        filename, statement, target,
        "or, if you need the write itself, write into a copy so the saved value stays intact"))
    return suggestions


def augmented_assignment_fixes(filename: str, statement: ast.AugAssign,
                                facts: WriteFacts | None = None) -> list[Suggestion]:
    container_element = facts is not None and facts.container_element and isinstance(statement.target, ast.Subscript)
    if not _plain(statement.target) and not container_element:
        # `probs[i, j] -= 1`
        return clone_first_fix(filename, statement, statement.target,
                               container_kinds=facts.container_kinds if facts is not None else None)
    operator = AUGMENTED_OPERATORS.get(type(statement.op))
    target = segment(filename, statement.target)
    value = segment(filename, statement.value)
    if operator is None or target is None or value is None:
        return []
    if isinstance(statement.value, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda)):
        value = f"({value})"
    return [Suggestion(
        "write out of place: a new tensor, so the saved one stays intact",
        f"{target} = {target} {operator} {value}",
        statement_location(filename, statement),
    )]


def _find_call(statement: ast.stmt, line: int, column: int | None) -> ast.Call | None:
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)]
    if column is not None:
        exact = [c for c in calls if c.lineno == line and c.col_offset <= column <= (c.end_col_offset or 0)]
        if exact:
            # The innermost call that covers the column.
            return max(exact, key=lambda c: c.col_offset)
    return calls[0] if calls else None


def method_call_fixes(filename: str, statement: ast.stmt, line: int, column: int | None,
                      container_kinds: dict[str, str] | None = None) -> list[Suggestion]:
    """`h.mul_(s)` -> `h = h.mul(s)`; `torch.relu_(x)` -> `x = torch.relu(x)`; `F.relu(x, inplace=True)`.
    `container_kinds` names the tuples, lists and dicts on the line at run time: `c["k"].copy_(v)`
    writes into an entry of the container `c`, which has no `clone()` of its own."""
    location = statement_location(filename, statement)
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)]
    inplace_calls = [c for c in calls if any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True for k in c.keywords)]
    out_calls = [c for c in calls if any(k.arg == "out" for k in c.keywords)]
    statement_text = _statement_text(filename, statement)
    if inplace_calls:
        call = inplace_calls[0]
        keyword = next(k for k in call.keywords if k.arg == "inplace")
        replaced = replace_node_text(filename, statement, keyword.value, "False")
        if replaced:
            return [Suggestion("compute out of place: pass inplace=False", replaced, location)]
    for call in calls:
        flag = positional_inplace_flag(call)
        if flag is not None:
            replaced = replace_node_text(filename, statement, flag, "False")
            if replaced:
                return [Suggestion("compute out of place: pass inplace=False", replaced, location)]
    if out_calls:
        call = out_calls[0]
        out_keyword = next(k for k in call.keywords if k.arg == "out")
        destination = segment(filename, out_keyword.value)
        call_text = segment(filename, call)
        if destination and call_text and isinstance(statement, ast.Expr):
            if not _plain(out_keyword.value):
                # `out=y.detach()`, `out=y[0]`: not a name to rebind; the write goes into y's memory.
                return clone_first_fix(filename, statement, out_keyword.value, container_kinds=container_kinds)
            without_out = _call_without_keyword(filename, call, "out")
            if without_out:
                return [Suggestion("bind a new tensor instead of writing into out=",
                                   f"{destination} = {without_out}", location)]
    call = _find_call(statement, line, column)
    candidates = [call] if call is not None else []
    candidates += [c for c in calls if c is not call]
    for call in candidates:
        name = call_name(call)
        if not name or not name.endswith("_") or name.endswith("__"):
            continue
        out_of_place = name[:-1]
        args_text = ", ".join(filter(None, (segment(filename, a) for a in call.args)))
        keywords_text = ", ".join(filter(None, (segment(filename, k) for k in call.keywords)))
        all_args = ", ".join(filter(None, (args_text, keywords_text)))
        if isinstance(call.func, ast.Attribute) and not _is_module_path(call.func.value):
            if not _plain(call.func.value):
                temporary = _temporary_write_fix(filename, statement, call, out_of_place, all_args)
                if temporary is not None:
                    return [temporary]  # `v.add(e).sqrt_().add_(eps)`
                return clone_first_fix(filename, statement, call.func.value,  # `h[0].mul_(2)`
                                       container_kinds=container_kinds)
            receiver = segment(filename, call.func.value)
            if name in OUT_OF_PLACE_SPECIAL:
                new_call = OUT_OF_PLACE_SPECIAL[name](receiver, all_args)
            elif hasattr(torch.Tensor, out_of_place):
                new_call = f"{receiver}.{out_of_place}({all_args})"
            else:
                continue
        else:
            # torch.relu_(x) / F.relu_(x): the first argument is the one written.
            if not call.args:
                continue
            function = segment(filename, call.func)
            receiver = segment(filename, call.args[0])
            new_call = f"{function[:-1]}({all_args})"
        if isinstance(statement, ast.Expr) and statement.value is call:
            replacement = f"{receiver} = {new_call}"
        else:
            replacement = replace_node_text(filename, statement, call, new_call) or statement_text
        return [Suggestion("write out of place: a new tensor, so the saved one stays intact", replacement, location)]
    return []


# Methods whose result may share memory with their receiver (a view, or the receiver itself when
# nothing needs converting): a write into their result reaches the receiver.
VIEW_OR_SELF_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze",
    "transpose", "t", "permute", "movedim", "moveaxis", "swapaxes", "swapdims", "narrow", "select",
    "expand", "expand_as", "diagonal", "as_strided", "unfold", "split", "chunk", "unbind",
    "tensor_split", "hsplit", "vsplit", "dsplit", "detach", "contiguous", "to", "type", "type_as",
    "float", "double", "half", "bfloat16", "int", "long", "bool", "cpu", "cuda", "view_as_real",
    "view_as_complex", "adjoint", "conj", "resolve_conj", "resolve_neg", "align_to", "rename",
    "refine_names", "values", "indices", "requires_grad_", "__getitem__",
})


def _fresh_temporary(node: ast.AST) -> bool:
    """`v.add(e)`, `v.add(e).sqrt_()`: a tensor made by this very expression, through a method that
    returns new memory (not a view, not possibly its receiver), and written only by in-place methods
    chained on it. No name holds it, so nothing but this expression sees a write into it."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not _is_module_path(node.func.value):
        name = node.func.attr
        if name.endswith("_") and not name.endswith("__"):
            node = node.func.value  # an in-place link returns the tensor it was called on
            continue
        return name not in VIEW_OR_SELF_METHODS and hasattr(torch.Tensor, name)
    return False


def _temporary_write_fix(filename: str, statement: ast.stmt, call: ast.Call, out_of_place: str,
                         arguments: str) -> Suggestion | None:
    """`m.div(v.add(e).sqrt_().add_(eps))` -> `m.div(v.add(e).sqrt_().add(eps))`: the written tensor
    is a temporary of the expression (autograd saved it, here the output of sqrt_), so the
    out-of-place twin computes the same value and leaves the saved tensor as it was. A copy made
    first would need a name the expression does not have."""
    name = call.func.attr
    if name in OUT_OF_PLACE_SPECIAL or not hasattr(torch.Tensor, out_of_place) or not _fresh_temporary(call.func.value):
        return None
    receiver = segment(filename, call.func.value)
    if receiver is None:
        return None
    replaced = replace_node_text(filename, statement, call, f"{receiver}.{out_of_place}({arguments})")
    if replaced is None:
        return None
    return Suggestion(f"write out of place: {name}() writes into a tensor this expression has just made, which "
                      f"autograd saved; {out_of_place}() computes the same value in a new tensor",
                      replaced, statement_location(filename, statement))


def _out_of_place_chain(filename: str, node: ast.AST) -> str | None:
    """`x.mul_(0.5).tanh_()` -> `x.mul(0.5).tanh()`: a chain of in-place methods on a name, each
    written as its out-of-place twin; None when a link is anything else."""
    if _plain(node):
        return segment(filename, node)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    name = node.func.attr
    if (not name.endswith("_") or name.endswith("__") or name in OUT_OF_PLACE_SPECIAL
            or not hasattr(torch.Tensor, name[:-1])):
        return None
    receiver = _out_of_place_chain(filename, node.func.value)
    arguments = [segment(filename, part) for part in (*node.args, *node.keywords)]
    if receiver is None or None in arguments:
        return None
    return f"{receiver}.{name[:-1]}({', '.join(arguments)})"


def _read_elsewhere(filename: str, statement: ast.stmt, name: str) -> bool:
    """`name` is read after `statement` in the function that holds it, or anywhere in a loop around
    it (the next iteration reads it again); True when the file cannot tell."""
    try:
        with open(filename, encoding="utf-8") as stream:
            tree = parse_quietly(stream.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return True
    scope, loops = tree, []
    for node in ast.walk(tree):
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.While))
                and node.lineno <= statement.lineno and (node.end_lineno or 0) >= (statement.end_lineno or 0)
                and node is not statement):
            if isinstance(node, (ast.For, ast.While)):
                loops.append(node)
            elif scope is tree or node.lineno > scope.lineno:
                scope = node
    inside = {id(node) for node in ast.walk(statement)}
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        if id(node) in inside:
            continue
        if node.lineno > (statement.end_lineno or statement.lineno):
            return True
        if any(loop.lineno <= node.lineno <= (loop.end_lineno or 0) for loop in loops):
            return True
    return False


def inplace_chain_fix(filename: str, statement: ast.stmt) -> Suggestion | None:
    """`scale = piece.mul_(0.5).tanh_()` -> `scale = piece.mul(0.5).tanh()`, where the chain's result
    is used and the written name is not read again: the writes only served to compute that result,
    so writing out of place computes the same value and leaves the piece (and what it views) alone."""
    if isinstance(statement, ast.Expr):
        return None  # `piece.mul_(2)` alone: the write is the point of the statement
    for call in ast.walk(statement):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr.endswith("_") and not call.func.attr.endswith("__")):
            continue
        chain = _out_of_place_chain(filename, call)
        root = call
        while isinstance(root, ast.Call):
            root = root.func.value
        if chain is None or not isinstance(root, ast.Name) or _read_elsewhere(filename, statement, root.id):
            return None
        replaced = replace_node_text(filename, statement, call, chain)
        if replaced is None:
            return None
        return Suggestion(f"compute out of place: {root.id} is not read again, so its in-place methods only "
                          f"served to compute this value", replaced, statement_location(filename, statement))
    return None


def piece_chain_rebinding_fix(filename: str, statement: ast.stmt) -> Suggestion | None:
    """`piece.mul_(c).add_(t)` as a statement, where `piece` is one output of chunk/split/unbind
    (`a, piece = x.chunk(2)`) and neither the tensor it was taken from nor the other pieces' source
    is read after the statement -> `piece = piece.mul(c).add(t)`: the later reads of `piece` see the
    same values, and no one reads the base the write would also have reached."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    chain = _out_of_place_chain(filename, statement.value)
    root = statement.value
    while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute):
        root = root.func.value
    if chain is None or not isinstance(root, ast.Name) or chain == segment(filename, statement.value):
        return None
    try:
        with open(filename, encoding="utf-8") as stream:
            tree = parse_quietly(stream.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return None
    made = [node for node in ast.walk(tree) if isinstance(node, ast.Assign) and node.lineno < statement.lineno
            and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List))
            and any(isinstance(e, ast.Name) and e.id == root.id for e in node.targets[0].elts)]
    if not made:
        return None
    unpacking = max(made, key=lambda node: node.lineno)
    bases = {node.id for node in ast.walk(unpacking.value) if isinstance(node, ast.Name)} - {"torch"}
    if not bases or any(_read_elsewhere(filename, statement, base) for base in bases):
        return None
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.lineno <= statement.lineno <= (node.end_lineno or node.lineno)]
    function = max(functions, key=lambda node: node.lineno) if functions else None
    arguments = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs} \
        if function is not None else set()
    if bases & arguments and not any(isinstance(node, ast.Return) and node.value is not None
                                     for node in ast.walk(function)):
        return None  # a function that returns nothing writes its argument's pieces for the caller
    return Suggestion(f"write out of place and keep the name: {root.id} then holds the new values for the lines "
                      f"that read it, and the tensor it was split from ({', '.join(sorted(bases))}), which is not "
                      "read again, keeps its graph", f"{root.id} = {chain}", statement_location(filename, statement))


def positional_inplace_flag(call: ast.Call) -> ast.AST | None:
    """The `True` passed by position as `inplace` (`F.relu(x, True)`), found from the
    signature of the torch.nn.functional function of that name."""
    import inspect

    name = call_name(call)
    function = getattr(torch.nn.functional, name, None) if name else None
    if function is None or not callable(function):
        return None
    try:
        parameters = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    if "inplace" not in parameters:
        return None
    position = parameters.index("inplace")
    if position < len(call.args):
        argument = call.args[position]
        if isinstance(argument, ast.Constant) and argument.value is True:
            return argument
    return None


def _is_module_path(node: ast.AST) -> bool:
    """`torch`, `torch.nn.functional`, `F`: a module, not a tensor receiver."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in {"torch", "F", "functional", "nn"}


def _call_without_keyword(filename: str, call: ast.Call, keyword_name: str) -> str | None:
    function = segment(filename, call.func)
    parts = [segment(filename, a) for a in call.args]
    parts += [segment(filename, k) for k in call.keywords if k.arg != keyword_name]
    if function is None or any(p is None for p in parts):
        return None
    return f"{function}({', '.join(parts)})"


def inplace_module_definition_fix(filename: str, module_class: str, near_line: int) -> Suggestion | None:
    """`nn.ReLU(inplace=True)` -> `nn.ReLU(inplace=False)` at the module's definition line."""
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    if tree is None:
        return None
    candidates = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) == module_class:
            for keyword in node.keywords:
                if keyword.arg == "inplace" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                    candidates.append((node, keyword))
            if len(node.args) == 1 and module_class in ("ReLU", "ReLU6", "SELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid") \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value is True:
                candidates.append((node, node.args[0]))
    if not candidates:
        return None
    # Prefer the definition closest before the line that ran the module.
    candidates.sort(key=lambda item: (item[0].lineno > near_line, abs(near_line - item[0].lineno)))
    call, flag = candidates[0]
    statement = _enclosing_statement(tree, call)
    if statement is None:
        return None
    value_node = flag.value if isinstance(flag, ast.keyword) else flag
    replaced = replace_node_text(filename, statement, value_node, "False")
    location = statement_location(filename, statement, role="defined", note=f"{module_class} defined with inplace=True here")
    return Suggestion(f"define the {module_class} with inplace=False", replaced, location)


def _enclosing_statement(tree: ast.AST, target: ast.AST) -> ast.stmt | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                                                ast.For, ast.While, ast.If, ast.With, ast.Try)):
            if node.lineno <= target.lineno and (node.end_lineno or 0) >= target.end_lineno:
                if best is None or node.lineno >= best.lineno:
                    best = node
    return best


def written_root(statement: ast.stmt) -> ast.AST | None:
    """`w` for `w[0] -= v`, `w.add_(v)`, `w[:, i] = v`: the tensor an in-place statement writes."""
    if isinstance(statement, ast.AugAssign):
        written = statement.target
    elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Subscript):
        written = statement.targets[0]
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr.endswith("_") \
            and not statement.value.func.attr.endswith("__"):
        written = statement.value.func.value
    else:
        return None
    return _root_tensor(written)


def _written_root_text(filename: str, statement: ast.stmt) -> str | None:
    root = written_root(statement)
    return segment(filename, root) if root is not None else None


def _following_writes(filename: str, statement: ast.stmt, frame=None) -> list[ast.stmt]:
    """The statements right after `statement`, in the same block, that write in place into the
    same tensor (`w[:, i] -= a` then `w[:, i] += b`): the next one would fail the same way. With
    the live frame of the write, only those whose value is shown to carry no gradient
    (`_grad_free_value`): a later write of a value that does (`t[0] -= penalty * loss`) is part
    of the computation, and torch.no_grad() around it would stop what it trains."""
    from autograd_doctor.diagnosis.source import parse_file

    root = _written_root_text(filename, statement)
    tree = parse_file(filename)
    if root is None or tree is None:
        return []
    root_name = root.split(".")[0].split("[")[0]
    for node in ast.walk(tree):
        for field_name in ("body", "orelse", "finalbody"):
            body = getattr(node, field_name, None)
            if not isinstance(body, list):
                continue
            for position, sibling in enumerate(body):
                if isinstance(sibling, ast.stmt) and sibling.lineno == statement.lineno \
                        and sibling.col_offset == statement.col_offset:
                    following = []
                    for later in body[position + 1:]:
                        if _written_root_text(filename, later) != root:
                            break
                        if frame is not None and not _grad_free_value(later, frame, root_name):
                            break
                        following.append(later)
                    return following
    return []


# Calls whose result carries no gradient whatever their arguments (Python numbers, factories).
_GRAD_FREE_CALLS = frozenset({"float", "int", "len", "abs", "min", "max", "round", "zeros", "ones", "full",
                              "zeros_like", "ones_like", "full_like", "arange", "linspace", "eye", "tensor"})


def _grad_free_value(statement: ast.stmt, frame, root_name: str) -> bool:
    """Whether the value an in-place write puts into its target is shown to carry no gradient:
    every name it reads (but the written tensor's own, which no_grad may read) is bound, in the
    write's frame, to something that is not a tensor requiring grad nor a module, and every call
    is one of `_GRAD_FREE_CALLS`. Unknown (a name not bound yet, another call) is not shown."""
    if isinstance(statement, (ast.AugAssign, ast.Assign)):
        values = [statement.value]
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        values = [*statement.value.args, *(keyword.value for keyword in statement.value.keywords)]
    else:
        return False
    for value in values:
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                if any(keyword.arg == "requires_grad" for keyword in node.keywords):
                    return False
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if called not in _GRAD_FREE_CALLS and not _grad_preserving_call(node):
                    return False
            elif isinstance(node, ast.Name) and node.id != root_name:
                if node.id in frame.f_locals:
                    bound = frame.f_locals[node.id]
                elif node.id in frame.f_globals:
                    bound = frame.f_globals[node.id]
                elif node.id in frame.f_builtins:
                    continue
                else:
                    return False
                items = list(bound.values()) if isinstance(bound, dict) else bound \
                    if isinstance(bound, (list, tuple)) else [bound]
                if not all(_plain_value(item) for item in items[:64]):
                    return False
    return True


# Calls that make a tensor require grad whatever their arguments.
_GRAD_MAKING_CALLS = frozenset({"requires_grad_", "Parameter", "enable_grad", "set_grad_enabled", "make_dual",
                                "UninitializedParameter", "Variable"})
# Python modules whose functions compute from their arguments alone: a torch function, or a method
# of a tensor, gives a result that requires grad only when a tensor it reads does.
_COMPUTING_MODULES = ("torch", "math", "numpy")


def _grad_preserving_call(node: ast.Call) -> bool:
    """Whether a call's result carries a gradient only when what it reads does: a function of
    torch's own namespaces (`torch.cos(v)`, `torch.nn.functional.pad(v, ...)`), of math or NumPy,
    or a method call (`position.unsqueeze(1)`, `torch.linspace(0, 1, n).sqrt()`). What it reads (the
    arguments, the receiver, the module's name) is judged by the caller's walk: a name bound to a
    module, a tensor that requires grad or another object is not shown to carry none. Calls that make
    a tensor require grad (`requires_grad_`, `nn.Parameter`) or build an object (a class) are not."""
    return isinstance(node.func, ast.Attribute) and node.func.attr not in _GRAD_MAKING_CALLS \
        and node.func.attr[:1].islower()  # a class (`nn.Linear(...)`) makes an object, not a value


def _plain_value(value) -> bool:
    """A value that is shown to carry no gradient: a number, a string, a tensor or array that does
    not require grad, a function (its calls are judged apart), or one of torch's, math's or NumPy's
    modules (their functions compute from what they are given). Not a module of the network, not
    another object (its attributes may hold tensors with a graph)."""
    if isinstance(value, torch.Tensor):
        return not value.requires_grad
    if isinstance(value, torch.nn.Module):
        return False
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] in _COMPUTING_MODULES
    return isinstance(value, (int, float, bool, complex, str, type(None))) or callable(value) \
        or type(value).__module__ == "numpy"


def no_grad_fix(filename: str, statement: ast.stmt, frame=None) -> Suggestion:
    """`with torch.no_grad():` around the write and the writes into the same tensor right after
    it (only those shown to write values without gradient, when the write's live frame is given)."""
    statements = [statement, *_following_writes(filename, statement, frame)]
    text = "\n".join(_statement_text(filename, s) for s in statements)
    location = statement_location(filename, statement)
    location.end_line = statements[-1].end_lineno
    location.end_column = statements[-1].end_col_offset
    return Suggestion(
        "if this is initialisation or a manual parameter update, do it without recording it"
        + (" (with the writes into the same tensor that follow)" if len(statements) > 1 else ""),
        "with torch.no_grad():\n" + textwrap.indent(text, "    "),
        location,
    )


def write_fixes(filename: str, statement: ast.stmt | None, line: int, column: int | None,
                facts: WriteFacts) -> list[Suggestion]:
    """All out-of-place suggestions for the statement that did a write."""
    if statement is None:
        return []
    try:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Subscript):
            suggestions = subscript_assignment_fixes(filename, statement, facts)
        elif isinstance(statement, ast.AugAssign):
            suggestions = augmented_assignment_fixes(filename, statement, facts)
        else:
            suggestions = method_call_fixes(filename, statement, line, column, facts.container_kinds)
    except Exception:
        return []
    # `for p in model.parameters(): p = p - lr * p.grad` rebinds the loop variable and
    # changes nothing the loop iterates over: never suggest rebinding a loop variable.
    loop_variables = loop_targets(filename, statement)
    return [s for s in suggestions
            if not (s.replacement and _rebound_name(s.replacement.split("\n")[0]) in loop_variables)]


def loop_targets(filename: str, statement: ast.stmt) -> set[str]:
    """Names bound by the `for` loops (and comprehensions) around a statement."""
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    names: set[str] = set()
    if tree is None:
        return names
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor)) and node.lineno <= statement.lineno <= (node.end_lineno or 0):
            names.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)
                         and not _iterates_a_temporary(node, n.id))
    return names


def _iterates_a_temporary(loop: ast.For, name: str) -> bool:
    """Whether the loop binds `name` to pieces of a tensor that nothing else can read: one made in
    the loop's header (`for x_t in self.embed(tokens).unbind(1)`, also through zip(...)). A write
    into such a piece reaches no other name, so rebinding the name to an out-of-place result keeps
    the program's meaning (for `for p in model.parameters()` it would not)."""
    pairs = [(loop.target, loop.iter)]
    if isinstance(loop.target, ast.Tuple) and isinstance(loop.iter, ast.Call) and \
            getattr(loop.iter.func, "id", None) == "zip" and len(loop.target.elts) == len(loop.iter.args):
        pairs = list(zip(loop.target.elts, loop.iter.args))
    for target, iterable in pairs:
        if isinstance(target, ast.Name) and target.id == name:
            base = iterable
            while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and \
                    base.func.attr in ("unbind", "split", "chunk", "tensor_split", "unsqueeze", "transpose", "t"):
                base = base.func.value
            return isinstance(base, ast.Call) and base is not iterable and not _is_parameters_call(base)
    return False


def _is_parameters_call(call: ast.Call) -> bool:
    return getattr(call.func, "attr", getattr(call.func, "id", None)) in ("parameters", "buffers", "values")


def _rebound_name(code_line: str) -> str | None:
    """`p` for `p = p - lr * p.grad` (a plain rebinding); None for anything else."""
    try:
        tree = parse_quietly(code_line.strip())
    except SyntaxError:
        return None
    statement = tree.body[0] if tree.body else None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def apply_replacement(source: str, location: Location, replacement: str) -> str:
    """Replace the statement at `location` in `source` (used by tests and by users' tools).
    `replacement` is relative to the statement's first column (its later lines indented relative
    to its first, as `segment` and `replace_nodes_text` give them): the statement's indentation is
    added here, to every line, and nowhere before. A comment at the end of the statement's last line stays at the end of the replacement's
    (the user's note about the line is still about it), unless the replacement has its own."""
    lines = source.splitlines(keepends=True)
    first = location.line - 1
    last = (location.end_line or location.line) - 1
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    parts = replacement.split("\n")
    comment = _trailing_comment(lines[first:last + 1])
    if comment and "#" not in replacement:
        parts[-1] = f"{parts[-1]}  {comment}"
    new_lines = [indent + part + "\n" for part in parts]
    return "".join(lines[:first] + new_lines + lines[last + 1:])


def _trailing_comment(statement_lines: list[str]) -> str | None:
    """The comment after the code on the last of `statement_lines` (`x += 1  # why`), found by
    the tokenizer so that a `#` inside a string is not one; None without one."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("".join(statement_lines)).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    last_row = len(statement_lines)
    code_on_last_row = False
    for token in tokens:
        if token.start[0] != last_row:
            continue
        if token.type == tokenize.COMMENT:
            return token.string if code_on_last_row else None
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code_on_last_row = True
    return None


def _plain_tensor_expression(node: ast.AST) -> bool:
    """`x`, `self.x`, `batch[0]`: an expression that can be evaluated again without side effects."""
    if isinstance(node, ast.Subscript):
        return _plain_tensor_expression(node.value) and not any(
            isinstance(part, ast.Call) for part in ast.walk(node.slice))
    return _plain(node)


def _indexed_views(iterable: ast.AST, avoid: set[str]) -> str | None:
    """The loop's iterable rewritten to give views made by indexing (`x[i]`, `x.select(d, i)`),
    which may be written in place, instead of the outputs of unbind (iterating over a tensor
    unbinds it along dim 0), which may not. None for an iterable of another form."""
    index = next(name for name in ("index", "index_", "index__", "position") if name not in avoid)
    if _plain_tensor_expression(iterable):
        text = ast.unparse(iterable)
        return f"({text}[{index}] for {index} in range(len({text})))"
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
            and iterable.func.attr == "unbind" and _plain_tensor_expression(iterable.func.value) \
            and len(iterable.args) + len(iterable.keywords) <= 1:
        dims = [*iterable.args, *(k.value for k in iterable.keywords if k.arg == "dim")]
        if len(dims) != len(iterable.args) + len(iterable.keywords):
            return None
        dim = dims[0] if dims else ast.Constant(0)
        if not (isinstance(dim, ast.Constant) and isinstance(dim.value, int)) and not _plain(dim):
            return None
        text, dim_text = ast.unparse(iterable.func.value), ast.unparse(dim)
        return f"({text}.select({dim_text}, {index}) for {index} in range({text}.shape[{dim_text}]))"
    return None


def _is_tensor_value(node: ast.AST, values: dict | None) -> bool:
    """Does the expression (names, attributes, constant subscripts: no calls) evaluate to a tensor
    in the live frame? Without the frame's values, unknown: not assumed."""
    return values is not None and _tensor_value(node, values) is not None


def unbound_loop_fix(filename: str, statement: ast.stmt, values: dict | None = None) -> Suggestion | None:
    """`for channel in image[0]: channel.mul_(s)` (or `zip(image[0], ...)`, or `x.unbind(1)`):
    the loop variable is an output of unbind, which PyTorch refuses to write in place. Loop over
    views made by indexing instead: each is written in place into the same tensor, as meant."""
    from autograd_doctor.diagnosis.source import parse_file, source_line, walk_covering

    root = written_root(statement)
    tree = parse_file(filename)
    if not isinstance(root, ast.Name) or tree is None:
        return None
    loops = [node for node in walk_covering(tree, statement.lineno)
             if isinstance(node, ast.For) and node.lineno < statement.lineno <= (node.end_lineno or 0)]
    for loop in reversed(loops):  # the innermost loop first
        iterable = _iterable_bound_to(loop, root.id)
        if iterable is None:
            continue
        if iterable.lineno != loop.lineno or iterable.end_lineno != loop.lineno:
            return None
        tensor = iterable.func.value if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
            else iterable
        if not _is_tensor_value(tensor, values):
            return None  # a list of tensors (already unbound) is not made of views by indexing it
        avoid = {node.id for node in ast.walk(loop) if isinstance(node, ast.Name)}
        new_iterable = _indexed_views(iterable, avoid)
        if new_iterable is None:
            return None
        lines = [source_line(filename, n) for n in range(loop.lineno, loop.end_lineno + 1)]
        header = lines[0]
        lines[0] = header[:iterable.col_offset] + new_iterable + header[iterable.end_col_offset:]
        if any(line.strip() and len(line) - len(line.lstrip()) < loop.col_offset for line in lines):
            return None
        text = "\n".join(line[loop.col_offset:].rstrip() for line in lines)
        location = statement_location(filename, loop)
        return Suggestion(
            "loop over views made by indexing, not over the outputs of unbind (iterating a tensor unbinds it): "
            "a view made by indexing may be written in place, and the write reaches the tensor as before",
            text, location)
    return None


def unbinding_loop(filename: str, statement: ast.stmt, written, values: dict | None) -> ast.For | None:
    """The user's `for` statement that made the written view by iterating a tensor: the innermost
    loop around `statement` that binds the written name (`for boxes in pred_boxes:`, `zip(image[0],
    ...)`, `enumerate(x.unbind(1))`), with the run's evidence: the name's live value is an output of
    unbind, the written tensor is that value or a view of the same base, and that base is the
    iterated tensor's (evaluated without calls). None where any link is missing."""
    from autograd_doctor.diagnosis.source import parse_file, walk_covering

    root = written_root(statement) if statement is not None else None
    tree = parse_file(filename)
    if not isinstance(root, ast.Name) or tree is None or values is None or not isinstance(written, torch.Tensor):
        return None
    piece = values.get(root.id)
    node = getattr(piece, "grad_fn", None) if isinstance(piece, torch.Tensor) else None
    base = getattr(piece, "_base", None) if node is not None else None
    if base is None or not type(node).__name__.startswith("UnbindBackward"):
        return None
    if written is not piece and getattr(written, "_base", None) is not base:
        return None
    loops = [n for n in walk_covering(tree, statement.lineno)
             if isinstance(n, ast.For) and n.lineno < statement.lineno <= (n.end_lineno or 0)]
    for loop in reversed(loops):  # the innermost loop that binds the name
        iterable = _iterable_bound_to(loop, root.id)
        if iterable is None:
            continue
        if isinstance(iterable, ast.Call):
            if not (isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "unbind"):
                return None
            iterable = iterable.func.value
        tensor = _tensor_value(iterable, values)
        if tensor is None:
            return None
        return loop if (tensor._base if tensor._base is not None else tensor) is base else None
    return None


def _tensor_value(node: ast.AST, values: dict) -> torch.Tensor | None:
    """The tensor an expression of names, attributes and constant subscripts (no calls) holds in
    the live frame, read without running the user's code; None for anything else."""
    from autograd_doctor.analysis.live_values import expression_value

    value = expression_value(values.get, node)
    return value if isinstance(value, torch.Tensor) else None


def _iterable_bound_to(loop: ast.For, name: str) -> ast.AST | None:
    """The expression whose elements the loop binds to `name`: the iterable itself, or the
    matching argument of `zip(...)` (or of `enumerate(...)`'s second element)."""
    target, iterable = loop.target, loop.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
            and len(iterable.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target, iterable = target.elts[1], iterable.args[0]
    if isinstance(target, ast.Name):
        return iterable if target.id == name else None
    if isinstance(target, ast.Tuple) and isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
            and iterable.func.id == "zip" and len(iterable.args) == len(target.elts) and not iterable.keywords:
        for element, argument in zip(target.elts, iterable.args):
            if isinstance(element, ast.Name) and element.id == name:
                return argument
    return None


# In-place methods that change only a tensor's shape or strides, never its values: the
# out-of-place twin returns a view with the same values and the new shape.
METADATA_INPLACE = {"squeeze_", "unsqueeze_", "transpose_", "t_", "swapdims_", "swapaxes_"}


def metadata_inplace_fix(filename: str, statement: ast.stmt, line: int) -> Suggestion | None:
    """`h.squeeze_(0)` on a view that may not be written in place (an output of unbind/split):
    the shape change is all it does, so the out-of-place call gives the same values. As a
    statement on a name: `h = h.squeeze(0)`; as a value in a statement that rebinds the name the
    tensor was read from (`hx = [hx[i].squeeze_(0) for i in ...]`), on a comprehension's variable,
    or on a call's result:
    the call without `_`. None otherwise (another reader of the old tensor would miss the change)."""
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr in METADATA_INPLACE
             and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if len(calls) != 1:
        return None
    call = calls[0]
    receiver = segment(filename, call.func.value)
    arguments = segment(filename, call)[len(segment(filename, call.func)):] if receiver is not None else None
    if receiver is None or arguments is None:
        return None
    out_of_place = f"{receiver}.{call.func.attr[:-1]}{arguments}"
    location = statement_location(filename, statement)
    message = (f"use {call.func.attr[:-1]}(), which returns the same values with the new shape: "
               f"{call.func.attr}() changes only the shape, and PyTorch refuses even that on this view")
    if isinstance(statement, ast.Expr) and statement.value is call and _plain(call.func.value):
        return Suggestion(message, f"{receiver} = {out_of_place}", location)
    root = _root_tensor(call.func.value)
    rebound = isinstance(statement, ast.Assign) and isinstance(root, ast.Name) and any(
        isinstance(node, ast.Name) and node.id == root.id for target in statement.targets for node in ast.walk(target))
    # A comprehension's own variable (`[p.squeeze_(0) for p in x.unbind(0)]`) is seen nowhere else.
    local = isinstance(root, ast.Name) and any(
        isinstance(node, ast.comprehension) and isinstance(node.target, ast.Name) and node.target.id == root.id
        for node in ast.walk(statement))
    if rebound or local or isinstance(call.func.value, ast.Call):
        replaced = replace_node_text(filename, statement, call, out_of_place)
        return Suggestion(message, replaced, location) if replaced is not None else None
    return None
