"""AD101 when the write is a module's forward renormalizing its own weight in place:
`nn.Embedding(..., max_norm=...)` rescales the rows it looks up, under no_grad, at every call.
A use of `embedding.weight` earlier in the same step (`embedding.weight @ W.t()`) saved the weight
for backward, so the lookup makes that save stale. The module has no `inplace=` to turn off; the
change, as nn.Embedding's documentation says, is to clone the weight where the earlier use reads
it (`embedding.weight.clone() @ W.t()`): the forward values stay the same, and backward gets the
value that use saw."""

from __future__ import annotations

import ast
import re

from autograd_doctor.analysis.naming import modules_in, storage_key
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import parse_file, segment, statement_at, statement_location


# In-place ops that an nn module's forward applies to its own weight (not to its input, as an
# activation created with inplace=True does), by the op's name as the write log records it.
_WEIGHT_WRITING_OPS = {"embedding_renorm_"}


def writes_its_own_weight(write) -> bool:
    return write.op.rsplit(".", 1)[-1] in _WEIGHT_WRITING_OPS


def weight_name(saved, frames) -> str | None:
    """`items.weight` for the module weight whose memory the saved tensor is (or is a view of,
    as `F.linear` saves `weight.t()`)."""
    key = storage_key(saved)
    if key is None:
        return None
    for module_name, module in modules_in(frames):
        try:
            for name, parameter in module.named_parameters():
                if storage_key(parameter) == key:
                    return f"{module_name}.{name}" if module_name else name
        except Exception:
            continue
    return None


def what_the_module_does(module_class: str, module, where: str | None) -> str:
    named = f"{module_class}{' (' + where + ')' if where else ''}"
    max_norm = f"max_norm={module.max_norm}" if getattr(module, "max_norm", None) is not None else "max_norm"
    return (f"the write is done by {named}, created with {max_norm}: each call renormalizes the rows it looks up, "
            "in place in its weight (under no_grad); it has no inplace=False to ask for")


def clone_at_earlier_use(filename: str, write_line: int, name: str | None) -> tuple[Location, Suggestion] | None:
    """The one statement of the write's block, up to the write, that reads `name` (the weight)
    outside the module call, with `name` replaced by `name.clone()`; None when there is no such
    statement or more than one."""
    if not name:
        return None
    tree = parse_file(filename)
    write = statement_at(filename, write_line)
    if tree is None or write is None:
        return None
    block = _block_holding(tree, write)
    if block is None:
        return None
    uses = [statement for statement in block[:block.index(write) + 1] if _reads(statement, name)]
    if len(uses) != 1:
        return None
    use = uses[0]
    text = segment(filename, use)
    if text is None:
        return None
    pattern = r"(?<![\w.])" + re.escape(name) + r"(?![\w(])(?!\.clone\()"
    new_text, count = re.subn(pattern, name + ".clone()", text)
    if count == 0:
        return None
    location = statement_location(filename, use, role="saved",
                                  note=f"uses {name} before the lookup renormalizes it: autograd saves this value")
    return location, Suggestion(f"clone {name} where this statement uses it, so the lookup's renormalization "
                                "does not change the tensor autograd saved (the forward values stay the same)",
                                replacement=new_text, location=location)


def _block_holding(tree: ast.AST, statement: ast.stmt) -> list | None:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(item is statement for item in block):
                return block
    return None


def _reads(statement: ast.stmt, name: str) -> bool:
    """`name` read as a value in the statement (not the module call `embedding(idx)`, not a target)."""
    for node in ast.walk(statement):
        if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Load):
            if ast.unparse(node) == name:
                return True
    return False
