"""Does a changed program still mean what the original meant? (`run --verify-fix`, `--fix`, `--diff`)

A help is right only if the program keeps its meaning: its forward values (the losses handed to
backward(), the outputs handed to autograd.grad()) equal the original run's, and its gradients
and parameters after each optimizer step equal those of an oracle that computes what the
original program meant.

The oracle, for writes into tensors autograd saved (AD101, AD104, AD103, ...), is the original
program itself run with each tensor saved for backward copied before it is written in place
(`recording.saved_values_kept`: PyTorch's `allow_mutation_on_saved_tensors()`, with writes matched
to saved tensors by storage, so that a write through a view at another offset is seen too), so
backward uses the values the forward pass used, and the in-place writes still happen for
everything after them. Where the
original program still fails under it (a leaf written in place, a graph freed by an earlier
backward, a deepcopy, a gradient that is None), or where it raised nothing to begin with (a
silent problem: the fix is meant to change the gradients), there is no oracle: only the forward
values are compared and the answer is *unverified*, never *verified*.

Values are recorded only in the verify children, turned on by an environment variable; a normal
run never imports this module. In a child, `torch.autograd.backward` and `torch.autograd.grad`
are wrapped to keep a copy of their roots' values, a global optimizer step hook keeps the
parameters after each step, and at the end the tensors, modules' parameters and `.grad`s held by
the program's globals are copied; all of it is written to a file with `torch.save`.
"""

from __future__ import annotations

import os
import sys
import types
from dataclasses import dataclass

import torch

CAPTURE_VARIABLE = "AUTOGRAD_DOCTOR_CAPTURE"
# Values compare equal when torch.allclose(a, b, rtol=RTOL, atol=ATOL) holds (a few float32 ulps:
# an out-of-place rewrite computes the same ops, so in practice they are bitwise equal; the report
# says which).
RTOL = 1e-6
ATOL = 1e-7
ORACLE = "the original program run with each tensor autograd saved copied before it is written in place"


def _copies(values) -> list:
    if isinstance(values, torch.Tensor):
        values = [values]
    return [v.detach().clone() for v in values if isinstance(v, torch.Tensor)]


def seed_every_generator(seed: int = 0) -> None:
    """The original, the oracle and the changed program draw the same random numbers (a program
    that sets no seed would otherwise compute other values in every run); a program that seeds
    its generators itself overrides this, as it would anyway."""
    import random

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed)


class Capture:
    """Record forward values, gradients and stepped parameters in this process (a verify child)."""

    def __init__(self, path: str):
        self.path = path
        self.events: list[tuple[str, list]] = []
        self.sites: list[tuple[str, int] | None] = []  # the statement of each backward()/grad() call
        self._originals: list[tuple[object, str, object]] = []
        self._step_hook = None

    def start(self) -> "Capture":
        seed_every_generator()
        for name in ("backward", "grad"):
            original = getattr(torch.autograd, name)
            self._originals.append((torch.autograd, name, original))
            setattr(torch.autograd, name, self._wrap(name, original))
        import torch.optim.optimizer as optimizer_module

        register = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
        if register is not None:
            self._step_hook = register(self._after_step)
        return self

    def _wrap(self, kind: str, original):
        events, sites = self.events, self.sites

        def recorded(*args, **kwargs):
            # The roots come first, or by name: `tensors=` for backward(), `outputs=` for grad()
            # (`autograd.grad(outputs=..., inputs=..., create_graph=True)` in R1 penalties).
            tensors = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
            roots = tensors if isinstance(tensors, (list, tuple)) else [tensors]
            if _inside_a_transform(roots):
                # torch.func.grad calls torch.autograd.grad on the transform's wrapped tensors: a
                # step of the transform, whose values cannot leave it; what the program means is
                # the transform's result, which its globals hold.
                return original(*args, **kwargs)
            events.append((kind, _copies(roots)))
            sites.append(_caller_site())
            try:
                result = original(*args, **kwargs)
            except BaseException:
                # The call itself raised: the original run ends in it (see _failing_call_skipped).
                events.append(("raised", []))
                raise
            if kind == "grad":
                events.append(("grad result", _copies([g for g in result if g is not None])))
            return result

        return recorded

    def _after_step(self, optimizer, args, kwargs) -> None:
        self.events.append(("step", _copies([p for group in optimizer.param_groups for p in group["params"]])))

    def finish(self, namespace: dict, error: BaseException | None) -> None:
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        if self._step_hook is not None:
            self._step_hook.remove()
        state = {"events": self.events, "sites": self.sites, "final": final_state(namespace),
                 "error": None if error is None else f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"}
        torch.save(state, self.path)


def _caller_site() -> tuple[str, int] | None:
    """(function, line) of the program's statement that made a backward()/grad() call: the first frame
    outside torch and the doctor."""
    from autograd_doctor.recording.frames import is_internal_file

    frame = sys._getframe(2)
    while frame is not None:
        if not is_internal_file(frame.f_code.co_filename):
            return frame.f_code.co_name, frame.f_lineno  # not the file: the changed program is a copy
        frame = frame.f_back
    return None


def _inside_a_transform(tensors) -> bool:
    from autograd_doctor.compat import lookup

    is_wrapped = lookup("torch._C._functorch.is_functorch_wrapped_tensor")
    return is_wrapped is not None and any(isinstance(t, torch.Tensor) and is_wrapped(t) for t in tensors)


def start_capture_if_asked() -> Capture | None:
    path = os.environ.get(CAPTURE_VARIABLE)
    return Capture(path).start() if path else None


def _add_tensor(state: dict, name: str, tensor: torch.Tensor) -> None:
    # Only leaves that require grad (parameters, inputs being optimised): their values and
    # gradients are what the program means. Intermediate tensors are not compared: a fix that
    # writes out of place leaves a tensor's base unwritten on purpose.
    if not (tensor.requires_grad and tensor.is_leaf):
        return
    state[name] = tensor.detach().clone()
    if tensor.grad is not None:
        state[name + ".grad"] = tensor.grad.detach().clone()


def _add(state: dict, name: str, value, depth: int = 0) -> None:
    if isinstance(value, torch.Tensor):
        _add_tensor(state, name, value)
    elif isinstance(value, torch.nn.Module):
        for parameter_name, parameter in value.named_parameters():
            _add_tensor(state, f"{name}.{parameter_name}", parameter)
    elif depth < 2 and isinstance(value, (list, tuple)):
        for index, item in enumerate(value[:64]):
            _add(state, f"{name}[{index}]", item, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for key, item in list(value.items())[:64]:
            if isinstance(key, (str, int)):
                _add(state, f"{name}[{key!r}]", item, depth + 1)


def final_state(namespace: dict) -> dict:
    """The leaf tensors that require grad, and modules' parameters, that the program's globals
    hold: their values and their .grad."""
    state: dict = {}
    for name, value in sorted(namespace.items()):
        if name.startswith("__") or isinstance(value, (types.ModuleType, types.FunctionType, type)):
            continue
        try:
            _add(state, name, value)
        except Exception:
            continue
    return state


def run_oracle(capture_path: str, script: str, args: list[str]) -> None:
    """In a child: run the original program under the oracle, recording values."""
    from autograd_doctor.cli.as_main import run_script
    from autograd_doctor.recording.saved_values_kept import keep_saved_values

    capture = Capture(capture_path).start()
    error = None
    try:
        with keep_saved_values():
            run_script(script, args)
    except SystemExit:
        pass
    except BaseException as problem:  # the original's failure is a fact to record, not to raise
        error = problem
    capture.finish(sys.modules["__main__"].__dict__, error)


@dataclass
class Verdict:
    status: str  # "verified", "unverified" or "rejected"
    reason: str
    # rejected because the changed program computes other values than the original's (the help
    # would change what the program means), not because it failed or could not be checked
    computes_other_values: bool = False

    def line(self) -> str:
        prefix = {"verified": "verified", "unverified": "unverified", "rejected": "not verified"}[self.status]
        return f"{prefix}: {self.reason}"


def _computes_other_values(what: str) -> Verdict:
    return Verdict("rejected", f"the changed program computes other values: {what}", computes_other_values=True)


def _close(a, b) -> tuple[bool, bool]:
    """(close, bitwise) for two lists of tensors."""
    if len(a) != len(b):
        return False, False
    bitwise = True
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False, False
        if not torch.equal(x, y):
            bitwise = False
            if not torch.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
                return False, False
    return True, bitwise


def _how(bitwise: bool) -> str:
    return "bitwise" if bitwise else f"within rtol={RTOL:g}, atol={ATOL:g}"


def judge(original: dict, changed: dict, original_raised: bool, recomputes_failing_forward: bool = False,
          changes_failing_value: bool = False, corrects_earlier_steps: bool = False,
          corrects_forward_values: bool = False, failing_line: int | None = None,
          cuts_carried_graph: bool = False) -> Verdict:
    """Compare the changed program's values with the oracle's (the original under the oracle).
    `failing_line`: the line of the backward() that raised in the user's run (for a help that
    computes its forward again after the weights changed)."""
    if changed.get("error"):
        return Verdict("rejected", f"the changed program still fails: {changed['error']}")
    forward_kinds = ("backward", "grad")
    old_forward = [(k, v) for k, v in original["events"] if k in forward_kinds]
    new_forward = [(k, v) for k, v in changed["events"] if k in forward_kinds]
    if not original_raised:
        return _judge_silent_fix(old_forward, new_forward, corrects_forward_values)
    if corrects_earlier_steps:
        return _judge_earlier_steps_corrected(old_forward, new_forward)
    if (recomputes_failing_forward or changes_failing_value) and original.get("error") and old_forward:
        return _judge_recomputed_forward(old_forward, new_forward, original["error"], changes_failing_value)
    if recomputes_failing_forward and not original.get("error") and failing_line is not None:
        verdict = _judge_recomputed_after_stale_oracle(original, old_forward, new_forward, failing_line)
        if verdict is not None:
            return verdict
    if cuts_carried_graph and not original.get("error") and failing_line is not None:
        verdict = _judge_cut_carried_graph(original, old_forward, new_forward, failing_line)
        if verdict is not None:
            return verdict
    same_calls, bitwise, differing_call = _same_forward_calls(old_forward, new_forward)
    if not same_calls and _failing_call_skipped(original, changed, old_forward, new_forward, differing_call):
        prefix_bitwise = _same_forward_calls(old_forward[:-1], new_forward)[1]
        return Verdict("unverified", f"the changed program no longer makes the call that failed (backward()/"
                                     f"autograd.grad() call {len(old_forward)}) and its forward values before it "
                                     f"equal the original's ({_how(prefix_bitwise)}); no oracle gives the gradients "
                                     f"it meant: {ORACLE} fails too ({original.get('error')})")
    if not same_calls:
        if not original.get("error") and original_raised and _same_in_another_order(original, changed):
            return Verdict("unverified", REORDERED)
        if not _same_summed_losses(old_forward, new_forward):
            if differing_call is None:
                return Verdict("rejected", f"the changed program calls backward()/autograd.grad() "
                                           f"{len(new_forward)} time(s), the original {len(old_forward)}")
            return _computes_other_values(f"the values handed to "
                                          f"backward() call {differing_call} differ from the original run's")
        bitwise = False  # several losses were summed into one backward(): same total, other calls
    if original.get("error"):
        return Verdict("unverified", f"the changed program runs and its forward values up to the failing "
                                     f"backward() equal the original's ({_how(bitwise)}); no oracle gives the "
                                     f"gradients it meant: {ORACLE} fails too ({original['error']})")
    return _judge_gradients(original, changed, bitwise)


def _judge_recomputed_forward(old_forward: list, new_forward: list, oracle_error: str,
                              value_changed: bool = False) -> Verdict:
    """A change that computes the failing backward()'s forward pass again, because its graph was
    freed and the weights were written in place since: the original's values at that backward()
    are stale by construction (computed at the old weights), so only the calls before it must
    match. The failing call is the original's last one (values are recorded before the call).
    `value_changed`: the change gives the failing call another value on purpose, one it can
    differentiate (a complex loss made real)."""
    before = old_forward[:-1]
    same_before, bitwise, differing_call = _same_forward_calls(before, new_forward[:len(before)])
    if not same_before or len(new_forward) < len(old_forward):
        where = f"backward() call {differing_call}" if differing_call is not None else "the backward() calls"
        return _computes_other_values(f"the values handed to {where} "
                                      "before the failing one differ from the original run's")
    why = ("the value that call is given is changed on purpose, into one it can differentiate"
           if value_changed else "that backward()'s own values are computed again by the change, at the weights as "
                                 "they are now, so they differ from the original's stale ones")
    return Verdict("unverified", f"the changed program runs and its forward values before the failing backward() "
                                 f"equal the original's ({_how(bitwise)}); {why}, and no oracle gives the gradients "
                                 f"it meant: {ORACLE} fails too ({oracle_error})")


def _judge_recomputed_after_stale_oracle(original: dict, old_forward: list, new_forward: list,
                                         failing_line: int) -> Verdict | None:
    """A forward computed again after step() overwrote the weights its graph saved, where the oracle
    run succeeded: under the oracle the failing backward() goes through the values saved before the
    step (the stale weights), one reading of the program; the help computes that loss at the updated
    weights, the other reading, which the accepted fixes of such reports take (the DCGAN order). The
    oracle cannot tell which is meant, so the check is what both readings share: every call before
    the first one that differs equals the oracle's, that first differing call is made at the line
    that raised in the user's run (the loss the help computes again, not an earlier one), and no
    call is dropped. Then *unverified*, never verified. None when those do not hold."""
    _, _, differing = _same_forward_calls(old_forward, new_forward)
    if differing is None or len(new_forward) < len(old_forward):
        return None
    sites = original.get("sites") or []
    if len(sites) != len(old_forward) or sites[differing - 1] is None or sites[differing - 1][1] != failing_line:
        return None
    _, bitwise, _ = _same_forward_calls(old_forward[:differing - 1], new_forward[:differing - 1])
    return Verdict("unverified", f"the changed program runs and its forward values before backward() call {differing} "
                                 f"(line {failing_line}, the one that raised) equal the original's ({_how(bitwise)}); "
                                 "that loss is computed again at the weights step() wrote, on purpose, so it differs "
                                 "from the oracle's, which uses the values saved before the step (the other reading "
                                 "of the program); no oracle says which is meant")


def _judge_cut_carried_graph(original: dict, old_forward: list, new_forward: list,
                             failing_line: int) -> Verdict | None:
    """The program's own detach of a carried state moved into the loop of backward() and step():
    under the oracle the failing backward() and the later ones go back through earlier iterations'
    graphs at the weights saved then (one reading); with the change each stops at the state it was
    given (the other reading, the accepted answer's). A detach changes no value, so every call up to
    the first that differs must equal the oracle's, the failing one included: at least two calls at
    the line that raised come before that first differing call (the one before the raise and the
    raising one), and no call is dropped. Then *unverified*, never verified. None otherwise."""
    same, bitwise, differing = _same_forward_calls(old_forward, new_forward)
    if same or differing is None or len(new_forward) < len(old_forward):
        return None
    sites = original.get("sites") or []
    if len(sites) != len(old_forward):
        return None
    at_line = [index for index, site in enumerate(sites[:differing - 1]) if site is not None and site[1] == failing_line]
    if len(at_line) < 2:
        return None
    bitwise = _same_forward_calls(old_forward[:differing - 1], new_forward[:differing - 1])[1]
    return Verdict("unverified", f"the changed program runs and its forward values before backward() call {differing} "
                                 f"equal the original's ({_how(bitwise)}), the one that raised included; from there "
                                 "each backward() stops at the state it was given, so the gradients differ from the "
                                 "oracle's, which goes back through the earlier iterations' graphs at the weights they "
                                 "saved (the other reading of the program); no oracle says which is meant")


def _judge_earlier_steps_corrected(old_forward: list, new_forward: list) -> Verdict:
    """A fix of a bug that made the steps before the raise wrong without an error: what must stay is
    what the program computed before any gradient was used, the values handed to the first backward()."""
    same_first, bitwise, _ = _same_forward_calls(old_forward[:1], new_forward[:1])
    if not old_forward or not same_first:
        return _computes_other_values("the values handed to the first backward() differ from the original run's")
    return Verdict("unverified", "the changed program runs and the values handed to its first backward() equal "
                                 f"the original's ({_how(bitwise)}); the steps after it differ because the change "
                                 "also corrects them (the bug made them wrong before it raised), and no oracle "
                                 "gives the gradients the program meant")


def _judge_silent_fix(old_forward: list, new_forward: list, corrects_forward_values: bool = False) -> Verdict:
    """A fix for a problem PyTorch raised nothing for is meant to change the gradients, so every
    value after the first backward() may differ (the parameters it steps differ). What must stay is
    what the program computed before any gradient was used: the values handed to the first
    backward(), and the number of backward() calls."""
    if len(new_forward) != len(old_forward):
        return Verdict("rejected", f"the changed program calls backward()/autograd.grad() "
                                   f"{len(new_forward)} time(s), the original {len(old_forward)}")
    if corrects_forward_values:
        return Verdict("unverified", "the original program raised nothing, and the value the change corrects is "
                                     "computed before any backward() (a forward-mode derivative), so the values handed "
                                     "to backward() are meant to differ; no oracle says which are right (the number of "
                                     "backward() calls is the same)")
    same_first, bitwise, _ = _same_forward_calls(old_forward[:1], new_forward[:1])
    if not same_first:
        return _computes_other_values("the values handed to the first "
                                      "backward() differ from the original run's")
    return Verdict("unverified", "the original program raised nothing, so the change is meant to change its "
                                 "gradients and no oracle says which gradients are right; the values handed to "
                                 f"the first backward() equal the original's ({_how(bitwise)}), and later ones "
                                 "may differ because the gradients do")


def _failing_call_skipped(original: dict, changed: dict, old_forward: list, new_forward: list,
                          differing_call: int | None) -> bool:
    """Whether the original run ended in a backward()/grad() call that raised, the changed program
    differs from it first at that very call, and every call before it is the same: the change skips
    the failing call (`grads = grad(out, params) if params else ()`), so the calls after it shift
    and only those before it can be compared (the original never ran past it)."""
    events = original.get("events") or []
    if not original.get("error") or not events or events[-1][0] != "raised" or not old_forward:
        return False
    if differing_call != len(old_forward):
        return False
    # The changed program's call at that position is made by another statement (the failing one
    # is not made); the same statement with other values is another change, judged as before.
    old_sites, new_sites = original.get("sites") or [], changed.get("sites") or []
    index = len(old_forward) - 1
    if len(old_sites) != len(old_forward) or len(new_sites) != len(new_forward) or old_sites[index] is None:
        return False
    if index < len(new_sites):
        if new_sites[index] is None or new_sites[index] == old_sites[index]:
            return False
        # And another kind of call or other roots: a call of the same shape made a few lines
        # lower (a change that added lines above it) is not taken for a skipped one.
        (old_kind, old_roots), (new_kind, new_roots) = old_forward[index], new_forward[index]
        if old_kind == new_kind and [r.shape for r in old_roots] == [r.shape for r in new_roots]:
            return False
    return _same_forward_calls(old_forward[:-1], new_forward)[0]


def _same_forward_calls(old_forward: list, new_forward: list) -> tuple[bool, bool, int | None]:
    """(the same calls with close values, bitwise, the first call that differs or None)."""
    bitwise = True
    for index, ((old_kind, old), (new_kind, new)) in enumerate(zip(old_forward, new_forward)):
        close, exact = _close(old, new)
        if old_kind != new_kind or not close:
            return False, False, index + 1
        bitwise = bitwise and exact
    return len(new_forward) >= len(old_forward), bitwise, None


def _same_summed_losses(old_forward: list, new_forward: list) -> bool:
    """Whether both runs hand backward() scalar losses only, with the same total: the gradients
    of `(loss1 + loss2).backward()` are those of `loss1.backward(); loss2.backward()`, so a help
    that sums the losses keeps the program's meaning although its backward() calls differ."""
    def total(forward: list):
        values = [v for kind, call in forward for v in call if kind == "backward"]
        if not values or any(kind != "backward" for kind, _ in forward) or any(v.numel() != 1 for v in values):
            return None
        return sum(v.double().reshape(()) for v in values)

    old_total, new_total = total(old_forward), total(new_forward)
    if old_total is None or new_total is None:
        return False
    return bool(torch.allclose(old_total, new_total, rtol=RTOL, atol=ATOL))


REORDERED = ("the changed program hands backward() the same losses, and its optimizer steps leave the same "
             "parameters, as the oracle's, but in another order (the updates were reordered): no oracle says "
             "which order the program means")


def _same_in_another_order(original: dict, changed: dict) -> bool:
    """Whether the two runs have the same events (losses handed to backward(), parameters after
    each step) in another order, and end with the same parameter values: a help that moves one
    update before another. The order is an intent no oracle decides."""
    unused = list(original["events"])
    if len(unused) != len(changed["events"]):
        return False
    for kind, values in changed["events"]:
        match = next((i for i, (old_kind, old) in enumerate(unused)
                      if old_kind == kind and _close(old, values)[0]), None)
        if match is None:
            return False
        del unused[match]
    finals = [(value, changed["final"].get(name)) for name, value in original["final"].items()
              if not name.endswith(".grad")]
    return all(other is not None and _close([value], [other])[0] for value, other in finals)


def _judge_gradients(original: dict, changed: dict, bitwise: bool) -> Verdict:
    if len(original["events"]) != len(changed["events"]):
        return Verdict("rejected", "the changed program runs backward()/step() a different number of times")
    for index, ((old_kind, old), (new_kind, new)) in enumerate(zip(original["events"], changed["events"])):
        close, exact = _close(old, new)
        if (old_kind != new_kind or not close) and _same_in_another_order(original, changed):
            return Verdict("unverified", REORDERED)
        if old_kind != new_kind or not close:
            what = "the parameters after optimizer step()" if old_kind == "step" else "the gradients"
            return _computes_other_values(f"{what} (event {index + 1}) "
                                          f"differ from the oracle's ({ORACLE})")
        bitwise = bitwise and exact
    compared = 0
    for name, value in original["final"].items():
        other = changed["final"].get(name)
        if other is None:
            continue
        close, exact = _close([value], [other])
        if not close:
            kind, label = ("gradient", name[:-len(".grad")]) if name.endswith(".grad") else ("value", name)
            return _computes_other_values(f"the {kind} of `{label}` "
                                          f"differs from the oracle's ({ORACLE})")
        bitwise = bitwise and exact
        compared += name.endswith(".grad")
    stepped = sum(kind == "step" for kind, _ in original["events"])
    if not compared and not stepped:
        return Verdict("unverified", "the changed program runs and its forward values equal the original's, "
                                     "but it leaves no gradient or stepped parameter to compare with the oracle")
    return Verdict("verified", f"forward values, gradients and parameters equal the oracle's ({_how(bitwise)}; "
                               f"oracle: {ORACLE})")


def load(path: str) -> dict | None:
    try:
        return torch.load(path, weights_only=False)
    except Exception:
        return None


if __name__ == "__main__":
    run_oracle(sys.argv[1], sys.argv[2], sys.argv[3:])
