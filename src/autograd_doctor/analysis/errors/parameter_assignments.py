"""A computed tensor assigned to a registered parameter's name: `self.w = f(self.w)` in a
module's `forward()`. `nn.Module.__setattr__` accepts only an `nn.Parameter` (a leaf the optimizer
steps) or None under a parameter's name, and raises "TypeError: cannot assign 'torch.FloatTensor'
as parameter 'w' (torch.nn.Parameter or None expected)". The doctor names the statement, the
parameter and where it was registered, and says what made the tensor: a value computed from the
parameter itself is a new tensor on every call, not the parameter."""

from __future__ import annotations

import ast
import re

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, statement_change, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, module_attribute_assignment, value_of
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import statement_location

_MESSAGE = re.compile(r"cannot assign '([\w.]+)' as parameter '(\w+)' \(torch\.nn\.Parameter or None expected\)")


def _reads_attribute(node: ast.AST, owner: str, attribute: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attribute and isinstance(n.value, ast.Name)
               and n.value.id == owner and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def tensor_assigned_to_parameter(context: ErrorContext, already):
    import torch

    found = _MESSAGE.search(context.message)
    statement_found = user_statement(context)
    if found is None or statement_found is None:
        return None
    type_name, attribute = found.group(1), found.group(2)
    frame, _, filename, statement, location = statement_found
    targets = [t for t in getattr(statement, "targets", [getattr(statement, "target", None)])
               if isinstance(t, ast.Attribute) and t.attr == attribute and isinstance(t.value, ast.Name)]
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or len(targets) != 1 or statement.value is None:
        return None
    owner_name = targets[0].value.id
    module = value_of(frame, targets[0].value)
    if not isinstance(module, torch.nn.Module):
        return None
    target = f"{owner_name}.{attribute}"
    value_text = text_of(filename, statement.value) or "the value"
    from_itself = _reads_attribute(statement.value, owner_name, attribute)
    function = frame.f_code.co_name
    location.note = f"a {type_name} computed {'from ' + target + ' ' if from_itself else ''}is assigned to " \
                    f"the name of the parameter {target}"
    notes = [f"{target} is a registered parameter of {type(module).__name__} (an nn.Parameter, a leaf that the "
             "optimizer steps); nn.Module accepts only an nn.Parameter or None under that name",
             f"{value_text} is an ordinary tensor with a graph, made anew on every call of {function}(): it is "
             "not the parameter and cannot replace it"]
    related = []
    made_file, made = module_attribute_assignment(module, attribute)
    if made is not None:
        related.append(statement_location(made_file, made, role="made",
                                          note=f"{target} is registered as a parameter here"))
    helps = []
    if from_itself:
        # The statement updates the parameter from itself on every forward (a projection or
        # normalisation step). Deleting it keeps the parameter trained by its gradient alone
        # (STGODE's author's fix); the two ways of keeping the step change what is trained.
        helps.append(statement_change(location, f"delete this line: {target} stays the trained parameter, "
                                      "without this step in forward() (`pass` stands in for the line)", "pass"))
        helps.append(Suggestion(f"to use the stepped value in this forward only, bind it to a local name "
                                f"(`{attribute} = {value_text}`) and read that name below in place of {target}: "
                                "gradients then flow through the step into the parameter"))
        helps.append(Suggestion(f"to keep {target} itself constrained, update it outside the graph after "
                                f"optimizer.step() (`with torch.no_grad(): {target}.copy_(...)`) or register a "
                                "parametrization (torch.nn.utils.parametrize.register_parametrization); writing it "
                                f"through {target}.data inside forward() changes what is trained"))
    else:
        helps.append(Suggestion(f"bind the value to a local name (`{attribute} = {value_text}`) and use that name "
                                f"below; to make it a new trained parameter, wrap it: "
                                f"`{target} = torch.nn.Parameter({value_text}.detach())` in __init__, not in "
                                f"{function}()"))
    return diagnosis(codes.TENSOR_ASSIGNED_TO_PARAMETER, location, related, notes, helps)


MATCHERS = [
    (r"cannot assign '[\w.]+' as parameter '\w+' \(torch\.nn\.Parameter or None expected\)",
     tensor_assigned_to_parameter),
]
