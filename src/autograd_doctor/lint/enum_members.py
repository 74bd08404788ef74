"""The values of the members of an enumeration class, as a linted file names it.

ADL038 reads a test `if phase == LoopPhase.TRAIN:` against the argument a call
passes, `phase=LoopPhase.VAL` (gordicaleksa/pytorch-GAT, set AW in
docs/lint.md): two members of one enumeration compare unequal when their values
differ (members with equal values are one member, an alias), so the test fails
for that call.  The evidence is syntactic and gives no answer unless every link
is written in the project:

* the class is defined at the top level of the linted file, or imported by name
  (`from utils.constants import LoopPhase`), or found in exactly one module the
  file star-imports (`from utils.constants import *`) and bound by nothing else
  in the file; an imported class is read in its project file (``clearing.project_class``);
* it derives directly from `Enum`, `IntEnum`, `StrEnum`, `Flag` or `IntFlag`
  (bare or as `enum.X`), and defines none of the hooks that change a member's
  value or its comparison (`__new__`, `__init__`, `__eq__`, `__ne__`,
  `_missing_`, `_generate_next_value_`);
* a member's value is a literal assigned in the class body (`TRAIN = 0,`:
  the tuple `(0,)`); `auto()` and computed values are unknown.
"""

from __future__ import annotations

import ast

from autograd_doctor.lint.clearing import absolute_module, bound_otherwise, project_class, star_imported_project_class

_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
_VALUE_HOOKS = frozenset({"__new__", "__init__", "__eq__", "__ne__", "_missing_", "_generate_next_value_"})
_UNKNOWN = object()


def members_differ(first: ast.Attribute, second: ast.Attribute, tree: ast.Module, filename: str) -> bool | None:
    """Whether `Cls.A` and `Cls.B` (both written as an attribute of one bare class
    name) are different members of a project enumeration: True when both values
    are known and unequal, False when they are one member; None when not known."""
    if not (isinstance(first.value, ast.Name) and isinstance(second.value, ast.Name)
            and first.value.id == second.value.id):
        return None
    if first.attr == second.attr:
        return False
    values = _member_values(first.value.id, tree, filename)
    if values is None:
        return None
    a, b = values.get(first.attr, _UNKNOWN), values.get(second.attr, _UNKNOWN)
    if a is _UNKNOWN or b is _UNKNOWN:
        return None
    try:
        return bool(a != b)
    except Exception:  # a literal whose comparison fails: no claim
        return None


def _member_values(class_name: str, tree: ast.Module, filename: str) -> dict | None:
    """Member name -> literal value (`_UNKNOWN` where not a literal) of the
    enumeration ``class_name`` as ``tree`` names it; None when not shown to be one."""
    found = _enumeration_class(class_name, tree, filename)
    if found is None:
        return None
    values = {}
    for statement in found.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in _VALUE_HOOKS:
            return None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            name = statement.targets[0].id
            if name in values:
                return None  # bound twice: which value stands is the class body's business
            try:
                values[name] = ast.literal_eval(statement.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                values[name] = _UNKNOWN
    return values


def _enumeration_class(class_name: str, tree: ast.Module, filename: str):
    """The ClassDef of ``class_name`` as the module ``tree`` binds it, when it is an
    enumeration by a direct base; None when unknown or bound more than once."""
    defined = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    imported = [(node, alias) for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names if alias.name != "*" and (alias.asname or alias.name) == class_name]
    if bound_otherwise(class_name, tree) or len(defined) + len(imported) > 1:
        return None
    if defined:
        cls = defined[0]
    elif imported:
        node, alias = imported[0]
        module = absolute_module(node, filename)
        found = project_class(f"{module}.{alias.name}", filename) if module else None
        cls = found[1] if found else None
    else:
        found = star_imported_project_class(class_name, tree, filename)
        cls = found[1][1] if found else None
    if cls is None or not any(_base_name(base) in _ENUM_BASES for base in cls.bases):
        return None
    return cls


def _base_name(base) -> str | None:
    """`Enum` of `Enum` and of `enum.Enum`."""
    if isinstance(base, ast.Name):
        return base.id
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "enum":
        return base.attr
    return None
