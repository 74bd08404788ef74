"""AD244: a call between two optimizer steps put a module in eval mode and nothing put it back:
its parameters keep training with dropout off and batch-norm statistics frozen.

A sampling or evaluation helper that calls `self.eval()` (or `model.eval()`) inside the training
loop, and never `train()` again, leaves the model in eval mode for every step after it. Nothing
fails: dropout stops dropping, batch norm normalises with its running statistics and stops
updating them, and the loss looks fine.

Evidence, all at run time, looked at before each optimizer step (recording/module_flags.py
records the outermost `train(mode)` calls, not the ones train() makes on the children):
- since this optimizer's previous step, a `train(False)` call was made on a module, and no
  `train(True)` call on any module (an epoch that calls `model.train()` and then freezes a part on
  purpose, `model.backbone.eval()`, stays silent);
- the module is still in eval mode, is not itself a dropout or batch-norm layer (those are put in
  eval mode on purpose, to freeze statistics), and holds such a layer, in eval mode, whose
  behaviour differs between the modes;
- the optimizer about to step holds parameters of that module that have a gradient.
The first eval() made before the first step (a model evaluated, or trained in eval mode, from the
start) is never counted: only calls between two steps of the same optimizer are.

The line named is the call in the outermost user frame that binds the module to a name (the
helper's call in the training loop); the help calls `NAME.train()` right after it.
"""

from __future__ import annotations

import ast
import weakref

import torch

from autograd_doctor.analysis.source_scope import Scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_location
from autograd_doctor.recording.gradient_states import grad_of


def behaves_differently_in_eval(module) -> bool:
    """Dropout with p > 0, batch norm with running statistics, an RNN with dropout between layers."""
    nn = torch.nn
    if isinstance(module, nn.modules.dropout._DropoutNd):
        return float(getattr(module, "p", 0.0)) > 0.0
    if isinstance(module, nn.modules.batchnorm._BatchNorm):
        return bool(module.track_running_stats)
    if isinstance(module, nn.RNNBase):
        return float(module.dropout) > 0.0 and module.num_layers > 1
    if isinstance(module, nn.MultiheadAttention):
        return float(module.dropout) > 0.0
    return False


class EvalModeSteps:
    """AD244, checked before each optimizer step; reported once per eval() call."""

    def __init__(self, recorder):
        self._recorder = recorder
        self._seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> mode calls seen

    def at_step(self, optimizer, stack) -> Diagnosis | None:
        flags = self._recorder.module_flags
        try:
            previous = self._seen.get(optimizer)
            self._seen[optimizer] = flags.mode_calls
        except TypeError:
            return None
        if previous is None or previous == flags.mode_calls:
            return None  # the first step, or no train()/eval() call since the last
        calls = [call for call in flags.modes if call.index >= previous]
        if any(call.mode for call in calls):
            return None
        held = None
        for call in calls:
            module = call.module_ref()
            if module is None or call.reported or module.training or behaves_differently_in_eval(module):
                continue
            layers = [m for m in module.modules() if m is not module and not m.training
                      and behaves_differently_in_eval(m)]
            if not layers:
                continue
            if held is None:
                held = {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())}
            trained = [p for p in module.parameters() if id(p) in held and grad_of(p) is not None]
            if not trained:
                continue
            call.reported = True
            return _diagnosis(call, module, layers, len(trained), stack[0] if stack else None,
                              type(optimizer).__name__)
        return None


def _diagnosis(call, module, layers: list, trained: int, step_site, optimizer_class: str) -> Diagnosis | None:
    eval_site = call.stack[0] if call.stack else None
    if eval_site is None:
        return None
    # The frame of the step's own function (the training loop) when it names the module, else
    # the innermost one that does.
    in_loop = [entry for entry in call.names if step_site is not None and entry[3] is step_site.code]
    outer = in_loop[0] if in_loop else (call.names[0] if call.names else None)
    kinds = sorted({type(m).__name__ for m in layers})
    name = outer[2] if outer is not None else type(module).__name__
    eval_location = location_of(eval_site, role="eval", note=f"puts {name} ({type(module).__name__}) in eval mode")
    primary, helps = None, []
    if outer is not None and (outer[0], outer[1]) != (eval_site.filename, eval_site.lineno):
        scope = Scope(outer[0], outer[1])
        statement = scope.statement_at(outer[1]) if scope.tree is not None else None
        if statement is not None and isinstance(statement, (ast.Assign, ast.Expr, ast.AnnAssign, ast.AugAssign)):
            primary = statement_location(outer[0], statement, role="call",
                                         note=f"{name}.eval() runs inside this call, and {name} is never put "
                                              "back in train mode")
            text = segment(outer[0], statement)
            if text is not None:
                helps.append(Suggestion(f"put {name} back in train mode after the call: the values it returns stay "
                                        f"the same, and the training that follows runs with {', '.join(kinds)} "
                                        "in train mode again",
                                        f"{text}\n{name}.train()", statement_location(outer[0], statement)))
    related = [eval_location] if primary is not None else []
    if primary is None:
        primary = eval_location
    related.append(location_of(step_site, role="step",
                               note=f"{optimizer_class}.step() updates {trained} parameter(s) of {name} "
                                    "trained in eval mode"))
    notes = [f"{name} holds layers that behave differently in eval mode ({', '.join(kinds)}): dropout drops "
             "nothing, batch norm uses and no longer updates its running statistics",
             f"eval() was called between two steps and nothing called train() since, so {name}'s forward passes "
             "in training run in eval mode (no error)"]
    if not helps:
        helps.append(Suggestion(f"call {name}.train() after the evaluation or sampling and before the next "
                                "training forward (or use a copy of the model for sampling)"))
    return Diagnosis(code=codes.TRAINED_IN_EVAL_MODE, title=codes.title(codes.TRAINED_IN_EVAL_MODE),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["EvalModeSteps", "behaves_differently_in_eval"]
