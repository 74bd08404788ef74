"""AD170: inside a module's forward, a value that requires grad was copied into one of the module's
parameters through `.data`, and the loss's gradient then reached that parameter: it stops there.

Mean-field variational inference written as "sample the weights, put them in the network, run the
network" (`w = mu + eps * sigma; param.data.copy_(w[...].view(param.shape))`) trains `mu` and
`sigma` by the KL term alone: the copy is invisible to autograd, the likelihood's gradient lands
on the network's own parameters (overwritten at the next forward) and never on the variational
parameters. Nothing fails.

The recorder tells of each such copy once per line (recording/data_copies.py: a `.data` copy, in a
method named `forward`, of a value that requires grad while grad mode is on, into the memory of a
parameter of that module). At the next optimizer step the parameter is looked at: a gradient on it
shows that the loss went through the copied values. A soft update of a target network
(`target.data.copy_(tau * p + (1 - tau) * t)`) runs outside a forward and is not told of.

The line named is the copy. The help is advice: run the layers on the values themselves
(`torch.func.functional_call`, or the functional ops), which autograd records; how the values are
laid out over the parameters is the program's own, so no change is written.
"""

from __future__ import annotations

from autograd_doctor.analysis.stale_optimizer import shapes_of
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of

MAX_PENDING = 8


class CopiesThroughData:
    """Per run: the copies told of and not yet reported (weak references to their parameters)."""

    def __init__(self) -> None:
        self._pending: list = []
        self._reported = False

    def note(self, event) -> None:
        if not self._reported and len(self._pending) < MAX_PENDING:
            self._pending.append(event)

    def at_step(self, optimizer, step_stack) -> Diagnosis | None:
        if self._reported or not self._pending:
            return None
        for event in list(self._pending):
            parameter = event.parameter()
            if parameter is None:
                self._pending.remove(event)
                continue
            if parameter.grad is None:
                continue  # this step's loss did not go through the copied values
            self._reported = True
            self._pending.clear()
            return _diagnosis(parameter, event.stack, step_stack)
        return None


def _diagnosis(parameter, copy_stack, step_stack) -> Diagnosis:
    copy = location_of(copy_stack[0], role="copy", note="copies a value that requires grad through .data: "
                                                        "autograd does not record it")
    step = location_of(step_stack[0], role="step", note="the loss's gradient reached the parameter, not the value"
                       ) if step_stack else None
    notes = [f"the value copied into the parameter ({shapes_of([parameter])}) requires grad: it has a history back to "
             "tensors that require grad (such as a posterior's mean and scale)",
             "a copy through `.data` is invisible to autograd: backward() gave the parameter a gradient and stopped "
             "there, so what the value was computed from gets nothing from this loss, and the next forward "
             "overwrites whatever step() did to the parameter"]
    helps = [Suggestion("run the layers on the values themselves, which autograd records: "
                        "`torch.func.functional_call(module, {name: value, ...}, inputs)` with each value shaped as "
                        "its parameter, or the functional ops (`F.linear(x, weight, bias)`) on the values"),
             Suggestion("or, if the parameters are meant to be set without a gradient (loading, an average of "
                        "weights), copy `value.detach()` under `torch.no_grad()`")]
    return Diagnosis(code=codes.GRAPH_CUT_DATA_COPY, title=codes.title(codes.GRAPH_CUT_DATA_COPY),
                     severity="warning", primary=copy, related=[step] if step is not None else [],
                     notes=notes, help=helps)
