"""AD224: a term of the loss compares a value with itself: `kl_div(log_p_teacher, log_p_teacher)`,
`F.mse_loss(target, target)`. The term is a constant (zero for a divergence or a distance), so
it trains nothing; usually one of the two arguments was meant to be the prediction being
trained (a copy-and-paste slip, as in a distillation loss that compares the teacher with itself).

Looked at once per backward() line, with AD206's reading of the loss (analysis/number_terms.py:
its added terms, names followed to their assignments): a term that calls one of torch's losses or
distances (a loss module such as `nn.KLDivLoss()`, `F.kl_div`, `F.mse_loss`, `torch.dist`, ...)
whose two compared arguments are the same expression, written with names and torch's
deterministic functions only. A model called twice (`kl(model(x), model(x))`, R-Drop's
consistency term under dropout) is not the same value and is not reported.
"""

from __future__ import annotations

import ast
import types

import torch

from autograd_doctor.analysis.number_terms import loss_terms, read_value
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import call_argument, location_of, replace_node_text, segment, statement_location
from autograd_doctor.recording.frames import Site

# torch functions that compare their first two arguments.
COMPARING_FUNCTIONS = {"dist", "pairwise_distance", "cosine_embedding_loss", "kl_div", "mse_loss", "l1_loss",
                       "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
                       "binary_cross_entropy_with_logits", "soft_margin_loss", "poisson_nll_loss",
                       "gaussian_nll_loss", "hinge_embedding_loss"}
RANDOM_FUNCTIONS = {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                    "rand", "randn", "rand_like", "randn_like", "randint", "normal", "bernoulli", "multinomial",
                    "gumbel_softmax", "rrelu"}


def self_comparison_diagnosis(site: Site | None) -> Diagnosis | None:
    """AD224 for the loss backpropagated at `site`, or None."""
    found = loss_terms(site)
    if found is None:
        return None
    terms, reading = found
    for term, holder in terms:
        compared = _compared_with_itself(term, reading)
        if compared is not None:
            return _diagnosis(site, holder, compared, _prediction_for(compared, reading))
    return None


def _prediction_for(argument: ast.AST, reading) -> tuple[ast.Name, str] | None:
    """(the name in `argument` that holds a tensor without gradient, the one name of the frame
    that holds a prediction like it: a tensor of the same shape and dtype computed with
    gradient), or None when either is not unique."""
    constants = {node.id: value for node in ast.walk(argument) if isinstance(node, ast.Name)
                 for value in [read_value(node, reading)]
                 if isinstance(value, torch.Tensor) and not value.requires_grad}
    if len(constants) != 1:
        return None
    (name, constant), = constants.items()
    predictions = [other for other, value in reading.values.items()
                   if isinstance(value, torch.Tensor) and value.grad_fn is not None
                   and value.shape == constant.shape and value.dtype == constant.dtype and other.isidentifier()]
    if len(predictions) != 1:
        return None
    return next(node for node in ast.walk(argument) if isinstance(node, ast.Name) and node.id == name), predictions[0]


def _compared_with_itself(term: ast.AST, reading) -> ast.AST | None:
    """The argument that `term`, a call of one of torch's losses or distances, compares with an
    identical one; None otherwise."""
    call = term
    # `loss_fn(a, a).mean()`, `kl(a, a) * T ** 2`: the comparison inside a reduction or a scaling.
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and not call.args \
            and call.func.attr in ("mean", "sum") and isinstance(call.func.value, ast.Call):
        call = call.func.value
    if isinstance(call, ast.BinOp) and isinstance(call.op, (ast.Mult, ast.Div)):
        call = call.left if isinstance(call.left, ast.Call) else call.right
    if not isinstance(call, ast.Call) or not _compares(call.func, reading):
        return None
    first, second = call_argument(call, 0, "input"), call_argument(call, 1, "target")
    if first is None or second is None or ast.dump(first) != ast.dump(second):
        return None
    return first if _same_value_each_time(first, reading) else None


def _compares(function: ast.AST, reading) -> bool:
    value = read_value(function, reading) if isinstance(function, (ast.Name, ast.Attribute)) else None
    if isinstance(value, torch.nn.modules.loss._Loss):
        return True  # a loss module: nn.KLDivLoss(...), nn.MSELoss()
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    return name in COMPARING_FUNCTIONS and _from_torch(value)


def _from_torch(value) -> bool:
    module = getattr(value, "__module__", None) or ""
    return callable(value) and module.split(".")[0] == "torch"


def _same_value_each_time(expression: ast.AST, reading) -> bool:
    """Whether evaluating `expression` twice gives the same value: names, attributes, constants,
    subscripts, arithmetic and calls of torch's deterministic functions and tensor methods only."""
    for node in ast.walk(expression):
        if isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
            return False
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
        if name in RANDOM_FUNCTIONS:
            return False
        value = read_value(function, reading) if isinstance(function, (ast.Name, ast.Attribute)) else None
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) and _from_torch(value):
            continue  # F.log_softmax, torch.sigmoid
        if value is None and isinstance(function, ast.Attribute) and _tensor_method(function, reading):
            continue  # logits.softmax(-1), x.float()
        return False  # a module or a function of the program: it may differ between two calls
    return True


def _tensor_method(function: ast.Attribute, reading) -> bool:
    owner = function.value
    while isinstance(owner, ast.Call) and isinstance(owner.func, ast.Attribute):
        owner = owner.func.value
    value = read_value(owner, reading) if isinstance(owner, (ast.Name, ast.Attribute)) else None
    return isinstance(value, torch.Tensor) and hasattr(torch.Tensor, function.attr)


def _diagnosis(site: Site, holder: ast.stmt | None, argument: ast.AST, prediction) -> Diagnosis | None:
    filename = site.filename
    text = segment(filename, argument) or "the same value"
    note = (f"compares {text} with itself: the term is a constant (zero for a divergence or a distance), "
            "so it trains nothing")
    if holder is not None:
        primary = statement_location(filename, holder, role="term", note=note)
        related = [location_of(site, role="backward", note="adds the constant term to the loss it backpropagates")]
    else:
        primary, related = location_of(site, role="term", note=note), []
    if primary is None:
        return None
    helps = []
    if prediction is not None and holder is not None:
        constant, predicted = prediction
        first = replace_node_text(filename, holder, constant, predicted)
        if first is not None:
            # The compared arguments are the same text: the first occurrence is the first argument
            # (a loss's input, the prediction; its target stays the constant).
            helps.append(Suggestion(f"compare the prediction {predicted} with {constant.id} (the only tensor of "
                                    f"this shape computed with gradient here)", first,
                                    statement_location(filename, holder)))
    if not helps:
        helps.append(Suggestion("give the loss the prediction it should train as one of the two arguments (a "
                                "student's output against the teacher's, a reconstruction against its input)"))
    return Diagnosis(code=codes.SELF_COMPARED_TERM, title=codes.title(codes.SELF_COMPARED_TERM),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     help=helps)
