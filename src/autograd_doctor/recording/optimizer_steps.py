"""Tell the recorder when an optimizer step starts and ends (global step hooks).

One hook pair per optimizer step instead of a look-up per tensor it writes: the recorder
charges the writes between them to `optimizer.step()` (AD103), and the doctor checks, before
the step, that the optimizer's parameters are still the ones that get gradients (AD207).
"""

from __future__ import annotations

import threading

from autograd_doctor.recording.listener import OptimizerStepDone
from autograd_doctor.recording.own_frames import as_own_work
from autograd_doctor.recording.recorder import StrictViolation


def optimizer_step_hooks(recorder) -> tuple:
    """Register the hooks; returns their handles (empty when this torch has no global hooks)."""
    try:
        import torch.optim.optimizer as optimizer_module
    except ImportError:
        return ()
    register_pre = getattr(optimizer_module, "register_optimizer_step_pre_hook", None)
    register_post = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
    if register_pre is None or register_post is None:
        return ()

    def started(optimizer, args, kwargs):
        try:
            recorder.optimizer_clears.step_started(optimizer)  # a closure's zero_grad() is the step's own (AD153)
            recorder.closure_steps.started(optimizer, _closure(args, kwargs), next(recorder.seq))  # AD154
        except Exception:
            pass
        # step(closure) runs the user's forward and backward inside the step (LBFGS,
        # Lightning's automatic optimization): their writes must not go unrecorded.
        if args[1:] or kwargs.get("closure") is not None:  # args[0] is the optimizer itself
            return
        if threading.get_ident() == thread:
            try:
                recorder.optimizer_step_started(optimizer)
            except StrictViolation:
                raise  # silent="raise": a problem found before the step (AD207) stops the program
            except Exception:
                pass

    def done(optimizer, args, kwargs):
        try:
            recorder.closure_steps.done(optimizer, _closure(args, kwargs), recorder.backward_calls)
        except Exception:
            pass
        try:
            # Closure steps included (AD221); which backward() calls' gradients it applied (AD153).
            recorder.optimizer_clears.step_done(optimizer, next(recorder.seq), recorder.backward_calls)
        except Exception:
            pass
        if args[1:] or kwargs.get("closure") is not None or threading.get_ident() != thread:
            recorder.optimizer_step_done()
            return
        try:
            recorder.optimizer_step_done(optimizer)  # what the gradients held after the step
        except Exception:
            recorder.optimizer_step_done()
        try:
            recorder.listener.optimizer_step_done(OptimizerStepDone(optimizer))  # AD322
        except StrictViolation:
            raise
        except Exception:
            pass

    thread = threading.get_ident()
    # As the doctor's own work: a Tensor subclass's __torch_function__ does not see its reads.
    return (register_pre(as_own_work(started)), register_post(as_own_work(done)))


def _closure(args: tuple, kwargs: dict):
    """The closure given to step(): args[0] is the optimizer itself."""
    return args[1] if len(args) > 1 else kwargs.get("closure")
