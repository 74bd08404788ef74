"""The public run-time API: `watch()`, `install()` / `uninstall()`, and the wiring between
recording, analysis and reporting."""

from __future__ import annotations

import contextlib
import functools
import linecache
import os
import sys
import threading
import warnings
from typing import Any

import torch

from autograd_doctor import compat
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis import (
    cleared_before_step, compared_parameters, copies, diagnose, discarded_results, double_softmax, grad_off_blocks, idle_terms,
    log_probability_inputs,
    masked_nan, never_stepped, number_terms, probability_inputs, probed_model_steps, rebuilt_optimizer, score_function_weights, spent_parameter_iterators,
    self_compared_terms,
    self_weighted_terms,
    stale_graph_values, stale_closure, stale_leaf_gradients, stale_optimizer, state_snapshot, stop_gradient_targets,
    uncleared_closure, untrained_parameters, zero_factor_parameters, zero_gradient_ops,
)
from autograd_doctor.analysis import cut_module_outputs, forward_no_grad, unstepped_optimizers, update_order
from autograd_doctor.analysis.graph_gradients import GraphGradients
from autograd_doctor.analysis.mixed_second_derivatives import MixedSecondDerivatives
from autograd_doctor.analysis.unused_adapted_inputs import UnusedAdaptedInputs
from autograd_doctor.analysis.unbackpropagated_penalties import UnbackpropagatedPenalties
from autograd_doctor.analysis import shallow_copies
from autograd_doctor.analysis.copies_through_data import CopiesThroughData
from autograd_doctor.analysis import straight_through_terms, tied_parameters, ungraded_gathers, unused_submodules
from autograd_doctor.analysis import discarded_clamps
from autograd_doctor.analysis import nested_backward
from autograd_doctor.analysis import self_seeded_backward
from autograd_doctor.analysis import custom_backward_shapes
from autograd_doctor.analysis import combined_modules, own_state_loads, reinitialized_on_load
from autograd_doctor.analysis import no_grad_aliases
from autograd_doctor.analysis.parameters_made_in_forward import ParametersMadeInForward
from autograd_doctor.analysis import module_flags as requires_grad_flags
from autograd_doctor.analysis import frozen_step
from autograd_doctor.analysis import called_loss_cut_terms, eval_mode_steps, grad_off_terms, ungraded_step_writes, ungraphed_gradient_terms
from autograd_doctor.analysis.decorated_forward_parameters import DecoratedForwardParameters
from autograd_doctor.analysis.default_frozen_layers import DefaultFrozenLayers
from autograd_doctor.recording import frozen_constructions
from autograd_doctor.analysis import gradientless_steps
from autograd_doctor.analysis import source_scope
from autograd_doctor.analysis.source_scope import backward_roots
from autograd_doctor.analysis.torch_names import bind_torch_names
from autograd_doctor.analysis import errors as error_catalogue
from autograd_doctor.analysis.errors import grad_api, views
from autograd_doctor.recording.events import SavedRecord
from autograd_doctor.recording import (
    checkpoint_calls, grad_scalers, gradient_clips, leaf_sites, optimizer_groups, module_casts, module_flags, module_forwards, optimizer_clears, patches,
    probe, state_snapshots, widened_gradients,
)
from autograd_doctor.recording import switches
from autograd_doctor.recording.frames import capture_user_stack
from autograd_doctor.recording.calls import AUTOGRAD_GRAD
from autograd_doctor.recording.identity import IdentitySet
from autograd_doctor.recording.optimizer_steps import optimizer_step_hooks
from autograd_doctor.recording.parameter_swaps import parameter_swap_hooks
from autograd_doctor.recording.own_frames import hide_our_frames
from autograd_doctor.recording.function_mode import WriteWatcher
from autograd_doctor.recording.modes import MODE_VARIABLE, Mode
from autograd_doctor.recording.listener import (
    BackwardDone, BackwardFailed, BackwardStarted, CallFailed, DeepcopyFailed, DetachedAliasWrite, GraphCutCopy,
    LeafCreated,
    OptimizerStepDone, OptimizerStepStarting, OverlappingWrite, SilentSaveRead, StaleSaveAhead, StaleSaveRead, StaleSnapshotLoaded,
    ModuleStateLoaded, OwnStateLoaded,
    GatherWithoutGraph, ShallowTensorCopy, StaleViewMade, TensorCopied, UntrackedWriteFound,
)
from autograd_doctor.recording.recorder import Recorder, StrictViolation, grad_fn_error, pytorch_version_message
from autograd_doctor.diagnosis.model import Diagnosis, Report
from autograd_doctor.diagnosis.source import forget_changed_sources

# Optional pieces, each in its own module: the doctor works without them.
try:
    from autograd_doctor.analysis import gradient_path
except ImportError:
    gradient_path = None
try:
    from autograd_doctor.analysis import graph_snapshot
except ImportError:
    graph_snapshot = None
from autograd_doctor.report.text import gutter_width, render_diagnosis

SILENT_POLICIES = ("warn", "raise", "ignore")
CAPTURE_METHODS = ("patch", "mode")

LIGHT_MODE_NOTE = ("found by the default (light) mode, which does not record where tensors are saved; "
                   'watch(mode="full"), `autograd-doctor run --full` or `%%autograd_doctor --full` at the top of '
                   "a notebook cell also names the line that saved it")


def choose_mode(mode: str | Mode | None, strict: bool, silent: str, verify_saved: bool, capture: str) -> Mode:
    """The mode a doctor runs in: the one asked for, else full when an option needs it.

    strict (stop before the engine runs), verify_saved (fingerprints of saves), silent="raise" (stop
    at writes through `.data` into saved tensors) and capture="mode" all need every save
    recorded; otherwise the light mode, which costs a few percent.
    """
    if mode is None:
        mode = os.environ.get(MODE_VARIABLE) or None
    if mode is not None:
        mode = Mode.parse(mode)
    if strict or verify_saved or silent == "raise" or capture == "mode":
        return Mode.FULL
    return mode or Mode.LIGHT


class AutogradDoctorWarning(UserWarning):
    """A problem PyTorch does not raise for (e.g. a silently wrong gradient)."""


class AutogradDoctorError(StrictViolation):
    """Raised by the doctor itself: in strict mode, or for silent problems with silent='raise'.

    A RuntimeError, like the errors PyTorch raises for the same problems.
    """

    def __init__(self, message: str, diagnosis: Diagnosis | None = None):
        super().__init__(message)
        self.diagnosis = diagnosis
        if diagnosis is not None:
            self.__autograd_doctor__ = [diagnosis]


# Shown in tracebacks as the public name.
AutogradDoctorError.__module__ = "autograd_doctor"

_internal_errors = 0  # how many times the doctor failed in this process (internal_error_count)


def internal_error() -> None:
    """The doctor failed while explaining: stay quiet for users, loud when debugging it.

    Set AUTOGRAD_DOCTOR_DEBUG=1 to see the doctor's own tracebacks on stderr. Every call is
    counted (internal_error_count): the project's tests fail a test in which the count grew.
    """
    global _internal_errors
    _internal_errors += 1
    if os.environ.get("AUTOGRAD_DOCTOR_DEBUG"):
        import traceback

        print("autograd-doctor internal error (the user's exception is unchanged):", file=sys.stderr)
        traceback.print_exc()


def internal_error_count() -> int:
    """How many of the doctor's own failures (swallowed, see internal_error) this process had."""
    return _internal_errors


def diagnoses_of(error: BaseException) -> list[Diagnosis]:
    """The diagnoses autograd-doctor attached to an exception (empty if none)."""
    return list(getattr(error, "__autograd_doctor__", ()))


def explain_error(error: BaseException) -> None:
    """Attach the error catalogue's diagnoses (analysis/errors, docs/errors.md) to a user's
    exception; its type and message stay as they are, and a failure here changes nothing."""
    try:
        for diagnosis, leads in error_catalogue.catalogue_diagnoses(error, diagnoses_of(error)):
            attach(error, diagnosis)
            if leads:
                lead(error, diagnosis)
    except Exception:
        internal_error()


def lead(error: BaseException, diagnosis: Diagnosis) -> None:
    """Show `diagnosis`, attached to `error`, first: in `diagnoses_of(error)`, in the exception's
    notes (before the first autograd-doctor note) and in a doctor's report of the error (a
    refinement that names the line to change goes before the diagnosis it refines)."""
    existing = getattr(error, "__autograd_doctor__", None)
    index = next((i for i, d in enumerate(existing or ()) if d is diagnosis), None)
    if index is None:
        return
    existing.insert(0, existing.pop(index))
    try:
        error.__autograd_doctor_lead__ = diagnosis
    except Exception:
        pass
    note = _notes_by_diagnosis(error).get(id(diagnosis))
    notes = getattr(error, "__notes__", None)
    position = next((i for i, n in enumerate(notes or ()) if n is note), None)
    first = next((i for i, n in enumerate(notes or ()) if isinstance(n, str) and n.startswith("autograd-doctor:")), None)
    if position is not None and first is not None and first < position:
        notes.insert(first, notes.pop(position))


def attach(error: BaseException, diagnosis: Diagnosis) -> None:
    """Attach a diagnosis to the user's exception without changing its type or message."""
    existing = getattr(error, "__autograd_doctor__", None)
    if existing is None:
        existing = []
        try:
            error.__autograd_doctor__ = existing
        except Exception:
            return
    if any(d.code == diagnosis.code and d.primary == diagnosis.primary for d in existing):
        return
    bind_torch_names(diagnosis)
    existing.append(diagnosis)
    text = "autograd-doctor:\n" + render_diagnosis(diagnosis)
    if hasattr(error, "add_note"):
        error.add_note(text)
        _notes_by_diagnosis(error)[id(diagnosis)] = text
    else:  # Python 3.10: no PEP 678 notes; extend the message instead.
        if error.args and isinstance(error.args[0], str):
            error.args = (error.args[0] + "\n\n" + text,) + error.args[1:]


def _notes_by_diagnosis(error: BaseException) -> dict[int, str]:
    """id of an attached diagnosis -> the note object `attach` added for it (the diagnosis
    stays alive in `error.__autograd_doctor__`, so its id is not reused)."""
    notes = getattr(error, "__autograd_doctor_notes__", None)
    if notes is None:
        notes = {}
        try:
            error.__autograd_doctor_notes__ = notes
        except Exception:
            pass
    return notes


def reattach(error: BaseException, old: Diagnosis, new: Diagnosis) -> None:
    """Show `new` where `old` was attached: in `diagnoses_of(error)` and in the note that
    `attach` added for `old`, which is found by reference, not by its text. `new` may be
    `old` itself, changed since (a note added): its note is rendered again."""
    existing = getattr(error, "__autograd_doctor__", None)
    index = next((i for i, d in enumerate(existing or ()) if d is old), None)
    if index is None:
        attach(error, new)
        return
    bind_torch_names(new)
    existing[index] = new
    by_diagnosis = _notes_by_diagnosis(error)
    note = by_diagnosis.pop(id(old), None)
    notes = getattr(error, "__notes__", None)
    position = next((i for i, n in enumerate(notes or ()) if n is note), None)
    if position is not None:
        notes[position] = by_diagnosis[id(new)] = "autograd-doctor:\n" + render_diagnosis(new)


# The backward() calls after which some checks walk the whole graph (AD218, AD220, AD301): the
# first few only.
WALKING_BACKWARDS = max(stale_leaf_gradients.CHECKED_BACKWARDS, masked_nan.CHECKED_BACKWARDS,
                        gradient_path.CHECKED_BACKWARDS + 1 if gradient_path is not None else 0)


# AD228 is looked for at the first backward() after each of this many first optimizer steps.
STALE_VALUE_STEPS = 2
# How many later backward() calls of a line read its loss again when one of its terms had not
# run yet (`if epoch > 0: loss += ...`): enough for a term that starts after a first epoch of
# a few batches, bounded so a term that never runs costs little.
LOSS_TERM_RECHECKS = 16


class Doctor:
    """One active doctor: a recorder plus what it has diagnosed so far."""

    def __init__(self, strict: bool = False, silent: str = "warn", verify_saved: bool = False,
                 capture: str = "patch", mode: str | Mode | None = None):
        if silent not in SILENT_POLICIES:
            raise ValueError(f"silent must be one of {SILENT_POLICIES}, not {silent!r}")
        if capture not in CAPTURE_METHODS:
            raise ValueError(f"capture must be one of {CAPTURE_METHODS}, not {capture!r}")
        self.mode = choose_mode(mode, strict, silent, verify_saved, capture)
        self.capture = capture
        self.strict = strict
        self.silent = "raise" if strict and silent == "warn" else silent
        # The doctor is the recorder's listener (recording/listener.py): one method per event.
        self.recorder = Recorder(strict=strict, light=self.mode is Mode.LIGHT, listener=self)
        self.recorder.verify_saved = verify_saved
        self.diagnoses: list[Diagnosis] = []
        # Warnings the program's own warning filters dropped (shown by `autograd-doctor run`).
        self.hidden_warnings: list[Diagnosis] = []
        self._warned: set[tuple] = set()
        self._stale_view_checked: set[tuple] = set()
        self._loss_lines_checked: set = set()
        self._target_weight_lines: set = set()  # backward() lines looked at for AD175
        self._seeded_backward_lines: set = set()  # backward() lines given a seed, looked at for AD320
        # backward() lines whose loss has a term that had not run yet: the re-checks left for each.
        self._loss_terms_not_run: dict = {}
        # AD304 copies by their torch.tensor() line, each kept until a backward() whose loss has it
        # as a term; the (copy, backward line) pairs already read, so that each is read once.
        self._copies_pending: dict = {}
        self._copies_checked: set = set()
        self._copy_callers: dict = {}  # copy site -> the user sites calling its function (the copy's stack)
        self._copies_of_backward: list = []  # AD304 copies found in the loss of the backward() running
        # Losses whose terms were read after their backward(), judged when the next one starts (AD211).
        self._pending_losses: list = []
        self._backwards_seen = 0
        self._hooks = None
        self._step_hooks = ()
        self._swap_hooks = ()
        # Optimizers already reported by AD207 (ids), and the scans for other optimizers left.
        self._stale_optimizers_reported = IdentitySet()
        # Ids of the optimizers seen stepping with a gradient (analysis/frozen_step.py, AD215).
        self._optimizers_trained = IdentitySet()
        self._optimizer_scans = stale_optimizer.Budget()
        self._untrained_parameters = untrained_parameters.UntrainedParameters()
        self._probed_model_steps = probed_model_steps.ProbedModelSteps()
        self._zero_factor_parameters = zero_factor_parameters.ZeroFactorParameters()
        self._compared_parameters = compared_parameters.ComparedParameters()
        self._graph_gradients = GraphGradients()  # a hand-assigned .grad that carries a graph (AD311)
        self._parameters_made_in_forward = ParametersMadeInForward()
        self._discarded_clamps = discarded_clamps.DiscardedClamps()
        self._no_grad_aliases = no_grad_aliases.NoGradAliases()
        self._gradientless_steps = gradientless_steps.GradientlessSteps()
        self._mixed_second_derivatives = MixedSecondDerivatives()
        self._unused_adapted_inputs = UnusedAdaptedInputs()
        self._unbackpropagated_penalties = UnbackpropagatedPenalties()
        self._shallow_copy_lines: set = set()
        self._copies_through_data = CopiesThroughData()
        self._ungraded_gathers = ungraded_gathers.UngradedGathers()
        self._straight_through_terms = straight_through_terms.StraightThroughTerms()
        self._unused_submodules = unused_submodules.UnusedSubmodules()
        self._eval_mode_steps = eval_mode_steps.EvalModeSteps(self.recorder)
        self._ungraded_step_writes = ungraded_step_writes.UngradedStepWrites()
        self._decorated_forward_parameters = DecoratedForwardParameters()
        self._default_frozen_layers = DefaultFrozenLayers(self.recorder)
        self._tied_parameters = tied_parameters.TiedParameters()
        self._stale_leaf_gradients = stale_leaf_gradients.StaleLeafGradients()
        self._masked_nan_reported = False
        self._stale_value_steps_checked = 0  # the optimizer steps after which AD228 was looked for
        self._mode = None
        self._active = False
        self._thread = None

    # ---- lifetime ---------------------------------------------------------------

    def start(self) -> "Doctor":
        if self._active:
            return self
        if not compat.check():  # this torch lacks what the doctor cannot work without: stay off
            return self
        self._thread = threading.get_ident()
        forget_changed_sources()
        if self.mode is Mode.FULL:
            self._hooks = torch.autograd.graph.saved_tensors_hooks(self.recorder.pack, self.recorder.unpack)
            self._hooks.__enter__()
        try:
            if self.capture == "mode":
                self._mode = WriteWatcher(self.recorder)
                self._mode.__enter__()
            else:
                patches.activate(self.recorder)
        except Exception:
            if self._hooks is not None:
                self._hooks.__exit__(None, None, None)
            raise
        self._step_hooks = optimizer_step_hooks(self.recorder)
        gradient_clips.activate(self.recorder)
        optimizer_groups.activate(self.recorder)
        frozen_constructions.activate(self.recorder)
        module_flags.activate(self.recorder)
        module_casts.activate(self.recorder)
        optimizer_clears.activate(self.recorder)
        state_snapshots.activate(self.recorder)
        grad_scalers.activate(self.recorder)
        checkpoint_calls.activate(self.recorder)
        widened_gradients.activate(self.recorder)
        self._swap_hooks = parameter_swap_hooks(self.recorder.parameter_swaps)
        switches.activate()  # set_grad_enabled(False), detach_(), no_grad/inference_mode entries
        self._active = True
        if gradient_path is not None:
            try:
                gradient_path.on_start(self.recorder)
            except Exception:
                internal_error()
        return self

    def stop(self, failed: bool = False) -> None:
        """`failed`: the program ended with an exception, so the run did not show its whole course
        (an optimizer that would have stepped later): the judgments of the whole run that need it
        (AD316, AD317) are not made."""
        if not self._active:
            return
        self._active = False
        self._failed = failed
        switches.deactivate()
        gradient_clips.deactivate(self.recorder)
        optimizer_groups.deactivate(self.recorder)
        frozen_constructions.deactivate(self.recorder)
        module_flags.deactivate(self.recorder)
        module_casts.deactivate(self.recorder)
        optimizer_clears.deactivate(self.recorder)
        state_snapshots.deactivate(self.recorder)
        self._report_at_stop()
        grad_scalers.deactivate(self.recorder)
        checkpoint_calls.deactivate(self.recorder)
        widened_gradients.deactivate(self.recorder)
        module_forwards.deactivate(self.recorder)
        with contextlib.suppress(Exception):
            if self._mode is not None:
                self._mode.__exit__(None, None, None)
            else:
                patches.deactivate(self.recorder)
        for handle in self._step_hooks + self._swap_hooks:
            with contextlib.suppress(Exception):
                handle.remove()
        if self._hooks is not None:
            with contextlib.suppress(Exception):
                self._hooks.__exit__(None, None, None)

    def _report_at_stop(self) -> None:
        """What only the whole run shows: an optimizer that cleared its gradients and never
        stepped (AD221). Reported, never raised: the program has already ended."""
        if self.silent == "ignore" or any(d.code == codes.IDLE_LOSS_TERM for d in self.diagnoses):
            # A term that trains nothing that steps (AD211) is the same problem seen from the
            # loss: its parameters' optimizer is the one that never steps. One report, not two.
            return
        try:
            found = never_stepped.never_stepped_diagnoses(self.recorder)
            found += self._gradientless_steps.pending()  # AD214, made at a step, kept for the run's end
            if not self._failed:
                found += cut_module_outputs.cut_module_output_diagnoses(self.recorder)
                found += unstepped_optimizers.unstepped_optimizer_diagnoses(self.recorder)
            found += cleared_before_step.cleared_before_step_diagnoses(self.recorder)
            found += stale_closure.stale_closure_diagnoses(self.recorder)
            found += uncleared_closure.uncleared_closure_diagnoses(self.recorder)
            found += rebuilt_optimizer.rebuilt_optimizer_diagnoses(self.recorder)
            found += spent_parameter_iterators.spent_iterator_diagnoses(self.recorder)
            found += forward_no_grad.forward_no_grad_diagnoses()
        except Exception:
            internal_error()
            return
        silent, self.silent = self.silent, "warn"
        try:
            for diagnosis in found:
                self._raise_or_warn(diagnosis)
        finally:
            self.silent = silent

    def suspend_saves(self) -> bool:
        """Take our saved-tensor hooks off the stack if they are on top; True if taken."""
        top_of_stack = compat.lookup("torch._C._autograd._top_saved_tensors_default_hooks")
        if not self._active or top_of_stack is None or self._hooks is None:
            return False
        try:
            top = top_of_stack(False)
        except Exception:
            return False
        if top is None or top[0] != self.recorder.pack:
            return False
        self._hooks.__exit__(None, None, None)
        return True

    def resume_saves(self) -> None:
        self._hooks.__enter__()

    def report(self, error: BaseException | None = None) -> Report:
        report = Report(diagnoses=list(self.diagnoses))
        if error is not None:
            report.exception_type = type(error).__name__
            report.exception_message = str(error).split("\n\nautograd-doctor:")[0]
            for diagnosis in diagnoses_of(error):
                if diagnosis not in report.diagnoses:
                    report.diagnoses.append(diagnosis)
            leading = getattr(error, "__autograd_doctor_lead__", None)
            index = next((i for i, d in enumerate(report.diagnoses) if d is leading), None)
            if index:
                report.diagnoses.insert(0, report.diagnoses.pop(index))
        return report

    def _remember(self, diagnosis: Diagnosis) -> None:
        if diagnosis not in self.diagnoses:
            self.diagnoses.append(diagnosis)

    # ---- events from the recorder (the Listener protocol) ----------------------------

    def stale_save_read(self, event: StaleSaveRead) -> BaseException:
        record = event.record
        own = grad_fn_error(record)
        if own is not None:
            return own  # PyTorch's own error for this save; the catalogue explains it (AD138)
        node = diagnose.current_node()
        error = RuntimeError(pytorch_version_message(record, node))
        try:
            slot = self.recorder.find_slot(node, record)
            diagnosis = diagnose.stale_saved_diagnosis(record, node, slot, self._backward_stack(record),
                                                      capture=self.capture, recorder=self.recorder)
            diagnosis.mode = Mode.FULL
            record.reported = True
            if graph_snapshot is not None:
                try:
                    diagnosis.graph_data = graph_snapshot.snapshot_failure(node, record, self.recorder)
                except Exception:
                    internal_error()
            self._remember(diagnosis)
            attach(error, diagnosis)
        except Exception:
            internal_error()  # the plain PyTorch-worded error still comes through
        return error

    def _backward_stack(self, record: SavedRecord):
        """Where backward() was called: the call our wrapper saw (after the save), else the
        innermost user frame (a custom Function's backward runs user code itself)."""
        calls = self.recorder.backward_calls
        if calls and calls[-1].seq > record.seq and calls[-1].stack:
            return calls[-1].stack
        return capture_user_stack(2, limit=2)

    def silent_save_read(self, event: SilentSaveRead) -> None:
        """Backward is about to use a saved tensor whose memory changed behind PyTorch's back."""
        record = event.record
        if self.silent == "ignore":
            record.reported = True
            return
        try:
            if record.silent_writes:
                if self.recorder.content_restored(record):
                    return  # the write was undone (gradcheck's perturb-and-restore): check again next time
                builder = diagnose.silent_write_diagnosis
            elif self.recorder.content_changed(record):
                builder = diagnose.content_changed_diagnosis
            else:
                return  # fingerprint still matches: check again at the next unpack
            record.reported = True
            node = diagnose.current_node()
            slot = self.recorder.find_slot(node, record)
            diagnosis = builder(record, node, slot, self._backward_stack(record), self.recorder)
        except Exception:
            internal_error()
            return
        self._raise_or_warn(diagnosis)

    def untracked_write_found(self, event: UntrackedWriteFound) -> None:
        """Default mode, as backward starts: a `.data` write changed a tensor this graph saved."""
        if self.silent == "ignore":
            return
        try:
            diagnosis = diagnose.silent_write_diagnosis(event.record, event.node, event.slot,
                                                        capture_user_stack(3, limit=2), self.recorder)
            diagnosis.mode = Mode.LIGHT
        except Exception:
            internal_error()
            return
        self._raise_or_warn(diagnosis)

    def _report_silent(self, build, *args) -> Diagnosis | None:
        """Build a diagnosis for a problem PyTorch raises nothing for, then warn or raise; the
        diagnosis, or None."""
        if self.silent == "ignore":
            return None
        try:
            diagnosis = build(*args)
        except Exception:
            internal_error()
            return None
        if diagnosis is not None:
            self._raise_or_warn(diagnosis)
        return diagnosis

    def _attach_to_error(self, error: BaseException, build, *args) -> None:
        """Build a diagnosis for an exception PyTorch raised and attach it to that exception."""
        try:
            diagnosis = build(*args)
            if diagnosis is not None:
                self._remember(diagnosis)
                attach(error, diagnosis)
        except Exception:
            internal_error()

    def overlapping_write(self, event: OverlappingWrite) -> None:
        self._report_silent(diagnose.overlap_diagnosis, event.op, event.target, event.operand, event.stack)

    def detached_alias_write(self, event: DetachedAliasWrite) -> None:
        self._report_silent(diagnose.detach_write_diagnosis, event.op, event.target, event.source,
                            event.detach_site, event.stack)

    def leaf_created(self, event: LeafCreated) -> None:
        leaf_sites.remember_leaf_creation(event.tensor, event.site)

    def stale_save_ahead(self, event: StaleSaveAhead) -> None:
        """Strict mode: backward is about to run a node whose saved tensor was modified in place.
        Stop before the engine runs (no gradient accumulated, no hook run), at the user's
        backward() line; the report names the write, the notes give the write's call stack
        and PyTorch's own message, word for word."""
        record, node, slot = event.record, event.node, event.slot
        if grad_fn_error(record) is not None:
            return  # the engine raises PyTorch's own error for this save, not a version error (AD138 there)
        try:
            engine_message = pytorch_version_message(record, node)
            diagnosis = diagnose.stale_saved_diagnosis(record, node, slot, event.call.stack, capture=self.capture,
                                                      recorder=self.recorder)
            diagnosis.mode = Mode.FULL
            diagnosis.severity = "error"
            diagnosis.notes.insert(0, "strict mode: stopped at backward(), before the engine ran")
            if graph_snapshot is not None:
                try:
                    diagnosis.graph_data = graph_snapshot.snapshot_failure(node, record, self.recorder)
                except Exception:
                    internal_error()
        except Exception:
            internal_error()
            return  # PyTorch's own check fails the backward, and the doctor explains it there
        record.reported = True
        self._remember(diagnosis)
        notes = [note for note in (write_stack_note(record), "without the doctor, the engine would raise:\n"
                                   f"RuntimeError: {engine_message}") if note]
        if sys.version_info >= (3, 11):
            error = AutogradDoctorError(_strict_message(diagnosis), diagnosis)
            for note in notes:
                error.add_note(note)
        else:  # Python 3.10: no PEP 678 notes; the message carries them
            error = AutogradDoctorError("\n\n".join([_strict_message(diagnosis), *notes]), diagnosis)
        raise error

    def call_failed(self, event: CallFailed) -> None:
        self._attach_to_error(event.error, diagnose.call_error_diagnosis, event.error, event.func, event.args,
                              event.stack, event.module_class, event.kwargs)

    def stale_view_made(self, event: StaleViewMade) -> None:
        """A line made a view again after its base was overwritten; the old view is still alive."""
        old_view, view_site, write_stack = event.old_view, event.view_site, event.write_stack
        if self.silent == "ignore" or not write_stack:
            return
        pair = (view_site, write_stack[0])
        if pair in self._stale_view_checked:
            return
        self._stale_view_checked.add(pair)
        try:
            holder = diagnose.container_holding(old_view)
            if holder is None:
                return  # only a local variable about to be rebound: the usual, harmless loop
            diagnosis = diagnose.stale_view_diagnosis(old_view, view_site, write_stack, holder)
        except Exception:
            internal_error()
            return
        if diagnosis is not None:
            self._raise_or_warn(diagnosis)

    def tensor_copied(self, event: TensorCopied) -> None:
        """`torch.tensor(...)` of tensors that require grad: a copy, which is what a test's expected
        value, a logged figure or a metric wants; reported (AD304) only when a backward() has it as a
        term of its loss (`_copies_in_loss`)."""
        site = event.stack[0] if event.stack else None
        if self.silent == "ignore" or site is None or site in self._copies_pending or len(self._copies_pending) >= 64:
            return
        try:
            diagnosis = copies.tensor_copy_diagnosis(event.args, event.kwargs, event.stack)
        except Exception:
            internal_error()
            return
        if diagnosis is not None:
            self._copies_pending[site] = diagnosis  # plain data: no tensor of the program is kept
            # The user's lines that called the function making the copy (`loss, _ = solver(...)`).
            self._copy_callers[site] = tuple(event.stack[1:])

    def _copies_in_loss(self, backward_site) -> list[Diagnosis]:
        """The pending copies (AD304) that are terms of the loss backpropagated at `backward_site`."""
        found = []
        for copy_site, diagnosis in list(self._copies_pending.items()):
            if (copy_site, backward_site) in self._copies_checked or len(self._copies_checked) >= 1024:
                continue
            self._copies_checked.add((copy_site, backward_site))
            try:
                in_loss = copies.copy_is_loss_term(copy_site, backward_site, self._copy_callers.get(copy_site, ()))
            except Exception:
                internal_error()
                continue
            if in_loss:
                del self._copies_pending[copy_site]
                found.append(diagnosis)
        return found

    def stale_snapshot_loaded(self, event: StaleSnapshotLoaded) -> None:
        self._report_silent(state_snapshot.stale_snapshot_diagnosis, event)

    def own_state_loaded(self, event: OwnStateLoaded) -> None:
        """A module loading its own state_dict() where a module of its class is trained (AD169), or
        through another of its names, an item of a list that a combination was written into (AD182)."""
        if event.listed_at is not None:
            self._report_silent(combined_modules.combined_into_item_diagnosis, event)
            return
        self._report_silent(own_state_loads.own_state_load_diagnosis, event)

    def module_state_loaded(self, event: ModuleStateLoaded) -> None:
        """A load into a module whose forward will initialise the loaded parameters again (AD171)."""
        if self.silent == "ignore":
            return
        try:
            found = reinitialized_on_load.reinitialized_on_load_diagnoses(event.module, event.loaded)
        except Exception:
            internal_error()
            return
        for diagnosis in found:
            self._report_silent(lambda d: d, diagnosis)

    def shallow_tensor_copy(self, event: ShallowTensorCopy) -> None:
        """`copy.copy` of a tensor in the user's code: a "copy" over the same memory (AD166), once per line."""
        site = event.stack[0] if event.stack else None
        if site is None or site in self._shallow_copy_lines:
            return
        self._shallow_copy_lines.add(site)
        self._report_silent(shallow_copies.shallow_copy_diagnosis, event.requires_grad, event.stack)

    def graph_cut_copy(self, event: GraphCutCopy) -> None:
        """A value that requires grad copied into a parameter through `.data` in a forward: looked
        at the next step (AD170)."""
        self._copies_through_data.note(event)

    def gather_without_graph(self, event: GatherWithoutGraph) -> None:
        """A tensor with a graph gathered across processes: note what its graph reaches (AD162)."""
        if self.silent == "ignore":
            return
        try:
            self._ungraded_gathers.seen(event.tensor, event.stack)
        except Exception:
            internal_error()

    def deepcopy_failed(self, event: DeepcopyFailed) -> None:
        self._attach_to_error(event.error, copies.deepcopy_error_diagnosis, event.error, event.obj, event.stack)

    def optimizer_step_done(self, event: OptimizerStepDone) -> None:
        """After step(): did it change parameters backward() gave no gradient (AD322)?"""
        self._report_silent(self._ungraded_step_writes.after_step, event.optimizer)

    def optimizer_step_starting(self, event: OptimizerStepStarting) -> None:
        """Before step(): does it apply clipped gradients (AD208), clipped partial sums of an
        accumulation (AD212), gradients cleared since the
        previous step (AD209), parameters a `module.requires_grad = False` meant to freeze (AD216),
        an optimizer whose parameters are all frozen since it last trained them (AD215), does the
        optimizer still hold the parameters that train (AD207), and do parameters beside it get
        gradients that no optimizer applies (AD213), was a gradient clamp thrown away (AD222), did a
        no_grad block only rename tensors that keep their history (AD155), and does
        it apply gradients another optimizer's loss left on its parameters (AD230) or added to them
        after its own backward() (AD176), does a clip since its backward() cover only other
        parameters (AD177), and was a tied parameter unfrozen through one of its names (AD172)?"""
        if self.silent == "ignore":
            return
        optimizer, stack, recorder = event.optimizer, event.stack, self.recorder
        try:
            self._ungraded_step_writes.before_step(optimizer, stack)  # AD322, after the step
        except Exception:
            internal_error()
        # The checks in their order, each as `_report_silent` would run it (its exception is the
        # doctor's internal error and the next check runs; a diagnosis is warned or raised, and a
        # raised one ends the step's checks), without a wrapper's call per check: a small step
        # (an optimizer's test suite) pays these checks' fixed cost hundreds of times.
        with_recorder = (optimizer, stack, recorder)
        plain = (optimizer, stack)
        trained = self._optimizers_trained
        checks = [
            (update_order.misplaced_clip_diagnosis, with_recorder),
            (update_order.clip_before_unscale_diagnosis, with_recorder),
        ]
        if recorder.grad_scalers.calls:  # (AD248 needs an unscale_() call; most programs make none)
            checks.append((update_order.double_unscale_diagnosis, with_recorder))
        checks.append((update_order.clip_inside_accumulation_diagnosis, with_recorder))
        checks.append((update_order.gradients_never_cleared_diagnosis, with_recorder))
        if recorder.optimizer_clears.partial_clears:  # (AD229 needs a model.zero_grad() that left some)
            checks.append((update_order.partial_clear_diagnosis, with_recorder))
        checks += (
            (update_order.gradients_left_by_another_diagnosis, with_recorder),
            (update_order.gradients_added_by_another_diagnosis, with_recorder),
            (update_order.clip_of_other_parameters_diagnosis, with_recorder),
            (self._discarded_clamps.at_step, plain),
            (self._no_grad_aliases.at_step, plain),
            (requires_grad_flags.requires_grad_attribute_diagnosis, with_recorder),
            (frozen_step.frozen_step_diagnosis, (optimizer, stack, recorder, trained)),
            (self._untrained_parameters.at_step, plain),
            # An explainer's optimizer built from its parameters() that also steps the evaluated model (AD249).
            (self._probed_model_steps.at_step, (optimizer, stack, trained)),
            (self._copies_through_data.at_step, plain),
            (self._zero_factor_parameters.at_step, plain),
            # A parameter the module's code reads only in comparisons: no gradient ever (AD325).
            (self._compared_parameters.at_step, plain),
            (self._graph_gradients.at_step, with_recorder),
            (self._straight_through_terms.at_step, plain),
            (self._unused_submodules.at_step, plain),
            (self._eval_mode_steps.at_step, plain),
            # A module stepped by the optimizer whose forward carries a grad-off decorator (AD240).
            (self._decorated_forward_parameters.at_step, plain),
            # An embedding rebuilt from a trained tensor, frozen by from_pretrained's default (AD241).
            (self._default_frozen_layers.at_step, plain),
        )
        for build, arguments in checks:
            try:
                diagnosis = build(*arguments)
            except Exception:
                internal_error()
                continue
            if diagnosis is not None:
                self._raise_or_warn(diagnosis)
        if event.swaps:
            self._report_silent(self._parameters_made_in_forward.at_step, optimizer, stack,
                                event.swaps, self._optimizer_scans)
            # A parameter tied to another module's, unfrozen through one name only (AD172).
            self._report_silent(self._tied_parameters.at_step, optimizer, stack, event.swaps)
        if self._report_silent(self._ungraded_gathers.at_step, optimizer, stack) is not None:
            # Its empty steps, if none of its parameters trains, are this same problem (not AD214 again).
            self._gradientless_steps.cover([optimizer])
        self._report_silent(self._gradientless_steps.at_step, optimizer, stack, recorder, trained)
        if event.optimizer in self._stale_optimizers_reported:
            return
        try:
            diagnosis = stale_optimizer.stale_optimizer_diagnosis(event.optimizer, event.stack, event.swaps,
                                                                  self._optimizer_scans)
        except Exception:
            internal_error()
            return
        if diagnosis is not None:
            self._stale_optimizers_reported.add(event.optimizer)
            self._raise_or_warn(diagnosis)

    def backward_started(self, event: BackwardStarted) -> None:
        call, func, args, kwargs = event.call, event.func, event.args, event.kwargs
        self._backwards_seen += 1
        site = call.site if call is not None else None
        if site is not None and site not in self._target_weight_lines and len(self._target_weight_lines) < 64:
            # Once per backward() line, before backward() frees the target's index: a target's
            # log-probability weighted by its own probability, not detached (AD175).
            self._target_weight_lines.add(site)
            self._report_silent(self_weighted_terms.target_weight_diagnosis, call, args, kwargs)
        if site is not None and site not in self._seeded_backward_lines and len(self._seeded_backward_lines) < 64 \
                and (len(args) > 1 or kwargs):
            # Once per backward() line that passes a seed: the loss seeded with itself (AD320).
            self._seeded_backward_lines.add(site)
            self._report_silent(self_seeded_backward.self_seeded_diagnosis, call, func, args, kwargs)
        if self._copies_pending and call is not None and call.site is not None:
            # Reported once the backward() is over: as the error's cause if it fails for want of
            # a graph (the copy was the only path), as a warning if it runs.
            self._copies_of_backward = self._copies_in_loss(call.site)
        if self._pending_losses:
            # The steps since the last checked backward() have run: did each of its terms train something?
            pending, self._pending_losses = self._pending_losses, []
            for loss in pending:
                if self._report_silent(idle_terms.idle_term_diagnosis, loss, self.recorder) is not None:
                    # The optimizers that stepped after that backward() may have had nothing to apply
                    # because of the cut just reported: their empty steps (AD214) are the same problem.
                    self._gradientless_steps.cover(
                        optimizer for optimizer in idle_terms.stepped_since(loss, self.recorder)[0]
                        if all(p.grad is None for group in optimizer.param_groups for p in group["params"]))
        if func is not AUTOGRAD_GRAD:
            # A penalty built from a create_graph gradient and left out of this loss (AD247).
            self._report_silent(self._unbackpropagated_penalties.before_backward, call, args, kwargs)
        if self._backwards_seen <= stale_leaf_gradients.CHECKED_BACKWARDS + 1:
            # A tensor updated by hand since the last backward(), its .grad not cleared (AD218).
            self._report_silent(self._stale_leaf_gradients.before_backward, call, func, args, kwargs,
                                self.recorder.write_log)
        # The gradient-path analysis looks at the first few backward() calls only; past
        # them (plus one, to let it clean up) it is not called at all.
        if gradient_path is not None and self._backwards_seen <= gradient_path.CHECKED_BACKWARDS + 1:
            try:
                gradient_path.on_backward_start(self.recorder, call, func, args, kwargs)
            except Exception:
                internal_error()

    def backward_done(self, event: BackwardDone) -> None:
        """After a successful backward: problems that raise nothing (e.g. a cut gradient path)."""
        if self._backwards_seen > WALKING_BACKWARDS:
            self._check_after_backward(event)
            return
        with source_scope.shared_graph_walks():  # the first calls' checks walk the same graph
            self._check_after_backward(event)

    def _check_after_backward(self, event: BackwardDone) -> None:
        call, func, args, kwargs, result = event.call, event.func, event.args, event.kwargs, event.result
        copies_in_loss, self._copies_of_backward = self._copies_of_backward, []
        for diagnosis in copies_in_loss:
            self._raise_or_warn(diagnosis)
        site = call.site if call is not None else None
        if site is not None and site in self._loss_terms_not_run:
            # A term of this line's loss had not run at its first backward() (added from the
            # second epoch on): read again, at most a few more backward() calls of the line.
            self._recheck_loss_terms(site)
        if site is not None and site not in self._loss_lines_checked and len(self._loss_lines_checked) < 64:
            # Once per backward() line: a loss term cut from the graph (AD206).
            self._loss_lines_checked.add(site)
            if self._report_silent(number_terms.number_term_diagnosis, site) is None \
                    and self._report_silent(ungraphed_gradient_terms.ungraphed_gradient_term_diagnosis, site) is None \
                    and self._silent_check_needs(number_terms.terms_not_yet_run, site):
                # (AD206 again for a term made from gradients taken without create_graph=True, followed
                # through loops and lists: ungraphed_gradient_terms.py)
                self._loss_terms_not_run[site] = LOSS_TERM_RECHECKS
            # A term of the loss a loss function returned, computed from a copy cut from the graph (AD327).
            self._report_silent(called_loss_cut_terms.called_loss_cut_term_diagnosis, site,
                                backward_roots(args, kwargs))
            # A term made under no_grad from a trained module's output (AD246).
            self._report_silent(grad_off_terms.grad_off_term_diagnosis, site)
            # A term that compares a value with itself (AD224).
            self._report_silent(self_compared_terms.self_comparison_diagnosis, site)
            # A sample or a rounding that sends zeros to what computed it (AD219).
            self._report_silent(zero_gradient_ops.zero_gradient_diagnosis, call, args, kwargs)
            # nll_loss / ctc_loss of a layer's raw scores (AD225).
            self._report_silent(log_probability_inputs.raw_score_diagnosis, call, args, kwargs)
            # kl_div / nll_loss of a softmax's output (AD156).
            self._report_silent(probability_inputs.probability_input_diagnosis, call, args, kwargs)
            # cross_entropy (log_softmax) of a softmax's output (AD160).
            self._report_silent(double_softmax.double_softmax_diagnosis, call, args, kwargs)
            # An out-of-place method called as a statement, its result thrown away (AD157).
            self._report_silent(discarded_results.discarded_result_diagnosis, call)
            # A policy-gradient term whose baseline is not detached (AD226).
            self._report_silent(score_function_weights.unbaselined_weight_diagnosis, call, args, kwargs)
            # A prediction compared with its own network's target, not detached (AD227).
            self._report_silent(stop_gradient_targets.stop_gradient_diagnosis, site)
            # An average weighted by a softmax of the averaged values, not detached (AD158).
            self._report_silent(self_weighted_terms.self_weight_diagnosis, call, args, kwargs)
            if self.silent != "ignore":
                try:
                    pending = idle_terms.note_loss(site, call.seq, backward_roots(args, kwargs))
                except Exception:
                    internal_error()
                    pending = None
                if pending is not None:
                    self._pending_losses.append(pending)
        if func is AUTOGRAD_GRAD:
            # A second derivative taken over a whole first derivative, its columns read one by one (AD165).
            self._report_silent(self._mixed_second_derivatives.after_grad, call, args, kwargs, result)
            # An adapted weight the forward did not use, where the parameter itself was used (AD243).
            self._report_silent(self._unused_adapted_inputs.after_grad, call, args, kwargs, result)
            try:  # a gradient with create_graph=True: is its graph run by the next backward()? (AD247)
                self._unbackpropagated_penalties.after_grad(call, args, kwargs, result)
            except Exception:
                internal_error()
        if self.recorder.state.get("widened_gradients"):
            # A custom backward returned a gradient the engine summed down to its input (AD159).
            self._report_silent(custom_backward_shapes.widened_gradient_diagnosis, self.recorder, call)
        if self.recorder.state.get("ignored_gradients"):
            # A custom backward that never reads its incoming gradient ran with one that is not 1 (AD315).
            self._report_silent(custom_backward_shapes.ignored_gradient_diagnosis, self.recorder, call)
        if self.recorder.state.get("unconnected_checkpoints"):
            # A reentrant checkpoint ran since the last backward() on inputs without grad.
            self._report_silent(grad_off_blocks.unconnected_checkpoint_diagnosis, self.recorder, call, args, kwargs)
        if self.recorder.state.get("unreplayed_random_checkpoints"):
            # A reentrant checkpoint with preserve_rng_state=False drew random numbers (AD168).
            self._report_silent(grad_off_blocks.unreplayed_random_checkpoint_diagnosis, self.recorder, call, args,
                                kwargs)
        if self._backwards_seen <= stale_leaf_gradients.CHECKED_BACKWARDS and self.silent != "ignore":
            try:
                self._stale_leaf_gradients.after_backward(func, args, kwargs, self.recorder, call)
            except Exception:
                internal_error()
        steps_seen = self.recorder.step_points.before_backward  # not those run inside this backward() (by hooks)
        if self._stale_value_steps_checked < steps_seen and self._stale_value_steps_checked < STALE_VALUE_STEPS:
            # A tensor computed before an optimizer step, used again after it (AD228): looked for
            # at the first backward() after each of the first steps only.
            self._stale_value_steps_checked = steps_seen
            self._report_silent(stale_graph_values.stale_value_diagnosis, self.recorder, call, args, kwargs)
            if self._stale_value_steps_checked >= STALE_VALUE_STEPS:
                # The last look: the steps after it need not be recorded (a parameter walk per step).
                self.recorder.step_points.stop()
        if self._backwards_seen <= masked_nan.CHECKED_BACKWARDS and not self._masked_nan_reported:
            diagnosis = self._report_silent(masked_nan.nan_gradient_diagnosis, call, args, kwargs)
            self._masked_nan_reported = diagnosis is not None
        if gradient_path is None or self._backwards_seen > gradient_path.CHECKED_BACKWARDS + 1:
            return
        try:
            found = gradient_path.after_backward(self.recorder, call, func, args, kwargs, result)
        except Exception:
            internal_error()
            return
        reported = {(d.primary.file, d.primary.line) for d in self.diagnoses if d.primary is not None}
        for diagnosis in found or ():
            if diagnosis.primary is not None and (diagnosis.primary.file, diagnosis.primary.line) in reported:
                continue  # the cut is the line already reported (a loss term cut from the graph, AD206)
            self._raise_or_warn(diagnosis)

    def _recheck_loss_terms(self, site) -> None:
        """AD206 again for a backward() line whose loss had a term that had not run yet; the line
        is dropped once the term was read (or reported) or its re-checks are spent."""
        left = self._loss_terms_not_run.pop(site) - 1
        if self._report_silent(number_terms.number_term_diagnosis, site) is None and left > 0 \
                and self._silent_check_needs(number_terms.terms_not_yet_run, site):
            self._loss_terms_not_run[site] = left

    def _silent_check_needs(self, question, *args) -> bool:
        """The answer of a yes/no question a silent check asks (False on an internal error, and
        when silent problems are ignored)."""
        if self.silent == "ignore":
            return False
        try:
            return bool(question(*args))
        except Exception:
            internal_error()
            return False

    def backward_failed(self, event: BackwardFailed) -> None:
        error, call, args, kwargs = event.error, event.call, event.args, event.kwargs
        copies_in_loss, self._copies_of_backward = self._copies_of_backward, []
        if copies_in_loss and gradient_path is not None and \
                not all(root.requires_grad for root in backward_roots(args, kwargs)):
            # The loss has no graph and its terms were copied by value: the gradient-path analysis
            # (made once here) names the cut in the loss's own lines, or the copy is the cause.
            try:
                path = gradient_path.backward_error_diagnosis(self.recorder, error, call, args, kwargs)
            except Exception:
                internal_error()
                path = None
            else:
                if path is None or path.extra.get("cut") == "unknown":
                    cause = copies_in_loss[0]
                    cause.severity = "error"
                    self._remember(cause)
                    attach(error, cause)
                    return
            for diagnosis in copies_in_loss:
                self._raise_or_warn(diagnosis)
            if path is not None:
                self._remember(path)
                attach(error, path)
            return
        for diagnosis in copies_in_loss:
            self._raise_or_warn(diagnosis)
        if any(d.code in (codes.SAVED_TENSOR_MODIFIED, codes.OPTIMIZER_MODIFIED_SAVED) for d in diagnoses_of(error)):
            return
        if not diagnoses_of(error):
            # A backward() inside a hook that this backward() runs (gradients off there): the
            # hook's call is the one that failed, not this one (set 36, pytorch#90520).
            self._attach_to_error(error, nested_backward.grad_off_in_backward_hook, error, call, args, kwargs)
            if diagnoses_of(error):
                return
        if self.mode is Mode.LIGHT and probe.is_stale_error(error):
            self._attach_to_error(error, self._light_stale_diagnosis, error, call, args, kwargs)
            return
        if probe.is_multi_output_view_error(error) and not diagnoses_of(error):
            self._attach_to_error(error, self._saved_piece_diagnosis, call, args, kwargs)
            if diagnoses_of(error):
                return
        if not diagnoses_of(error):
            # torch.autograd.grad with an input that a detach() cut from the output (AD305 naming the detach()).
            earlier = [c.seq for c in self.recorder.backward_calls if call is None or c is not call]
            self._attach_to_error(error, grad_api.detached_input_diagnosis, error, args, kwargs,
                                  self.recorder.detach_aliases, max(earlier, default=-1))
            if diagnoses_of(error):
                return
        if gradient_path is not None:
            self._attach_to_error(error, gradient_path.backward_error_diagnosis, self.recorder, error, call, args, kwargs)

    def _light_stale_diagnosis(self, error: BaseException, call, args: tuple, kwargs: dict) -> Diagnosis | None:
        """Light mode, after PyTorch's own version check failed: find the stale save in the
        graph, and in the write log the writes that moved its version."""
        stale = probe.find_stale_save(probe.roots_of(args, kwargs), str(error))
        if stale is None:
            return None
        recorder = self.recorder
        writes = recorder.write_log.writes_into(stale.tensor, stale.saved_version, stale.found_version)
        if not writes:
            writes = recorder.optimizer_writes_into(stale.tensor, stale.saved_version, stale.found_version)
        save = probe.ProbedSave.of(stale, writes[:3])
        diagnosis = diagnose.stale_saved_diagnosis(save, stale.node, stale.slot, call.stack if call else (),
                                                   capture=self.capture, recorder=recorder)
        diagnosis.mode = Mode.LIGHT
        diagnosis.notes.append(LIGHT_MODE_NOTE)
        if diagnosis.primary is None and diagnosis.related:
            # No write seen and no save recorded: the backward() call is what we know.
            diagnosis.primary = diagnosis.related.pop(0)
        if graph_snapshot is not None:
            try:
                diagnosis.graph_data = graph_snapshot.snapshot_failure(stale.node, save, recorder)
            except Exception:
                internal_error()
        return diagnosis

    def _saved_piece_diagnosis(self, call, args: tuple, kwargs: dict) -> Diagnosis | None:
        """backward() refused a saved piece of split/chunk/unbind whose base was written: find
        the piece in the graph, and in the write log the newest write into its memory (AD138)."""
        found = probe.find_modified_view_save(probe.roots_of(args, kwargs))
        if found is None:
            return None
        write = self.recorder.write_log.newest_write_into(found.tensor)
        if write is None:
            return None
        return views.saved_piece_base_written(write, found.node.name(), found.slot, call.stack if call else ())

    def _raise_or_warn(self, diagnosis: Diagnosis) -> None:
        key = (diagnosis.code, diagnosis.primary.file if diagnosis.primary else None,
               diagnosis.primary.line if diagnosis.primary else None)
        if key in self._warned and self.silent == "warn":
            return  # once per line: a loop must not flood the output
        self._warned.add(key)
        bind_torch_names(diagnosis)
        self._remember(diagnosis)
        if self.silent == "raise":
            raise AutogradDoctorError(_strict_message(diagnosis), diagnosis)
        if self.silent == "warn":
            primary = diagnosis.primary
            text, filename = warning_text(diagnosis), primary.file if primary else "<autograd-doctor>"
            if hidden_by_filters(text, AutogradDoctorWarning, filename, primary.line if primary else 0):
                # The program's own filters (`warnings.simplefilter("ignore")`) drop it: a front end
                # that prints a summary (`autograd-doctor run`) shows it instead.
                self.hidden_warnings.append(diagnosis)
            warnings.warn_explicit(text, AutogradDoctorWarning, filename, primary.line if primary else 0)


def hidden_by_filters(text: str, category: type, filename: str, lineno: int) -> bool:
    """Whether the warnings filters in force drop this warning (the first matching filter's
    action is "ignore"), matched as `warnings.warn_explicit` matches them."""
    module = filename[:-3] if filename.lower().endswith(".py") else filename
    for action, message, filtered, module_pattern, line in warnings.filters:
        if (message is None or message.match(text)) and issubclass(category, filtered) \
                and (module_pattern is None or module_pattern.match(module)) and line in (0, lineno):
            return action == "ignore"
    return False


def warning_text(diagnosis: Diagnosis) -> str:
    """The message of the warning for a silent problem: the report, headline first.

    Python prints a warning as `file:line: Category: message` and then quotes the source
    line at file:line; the last line here says so, so that quote does not read as more help.
    """
    text = render_diagnosis(diagnosis)
    primary = diagnosis.primary
    if primary is None:
        return text
    gutter = " " * gutter_width(diagnosis)
    return f"{text}\n{gutter} = warned at {primary.file}:{primary.line}:"


def _strict_message(diagnosis: Diagnosis) -> str:
    return f"{diagnosis.title}\n\n{render_diagnosis(diagnosis)}"


def write_stack_note(record: SavedRecord) -> str:
    """The call stack of the write that modified a saved tensor, as a traceback prints it (most
    recent call last, the user's frames only), so that the culprit line shows, and an editor
    links it, in an error raised at backward(); empty when the write was not seen."""
    write = record.writes[0] if record.writes else None
    if write is None or not write.stack:
        return ""
    lines = ["the write that modified the saved tensor (most recent call last):"]
    for site in reversed(write.stack):
        lines.append(f'  File "{site.filename}", line {site.lineno}, in {site.function}')
        source = linecache.getline(site.filename, site.lineno).strip()
        if source:
            lines.append(f"    {source}")
    return "\n".join(lines)


class watch(contextlib.ContextDecorator):
    """Record saves and writes while the block runs; explain autograd failures.

    Use as a context manager or a decorator::

        >>> import torch, autograd_doctor
        >>> x = torch.ones(3, requires_grad=True)
        >>> with autograd_doctor.watch():
        ...     y = torch.sigmoid(x)
        ...     y[0] = 0.0
        ...     try:
        ...         y.sum().backward()
        ...     except RuntimeError as error:
        ...         print(autograd_doctor.diagnoses_of(error)[0].code)
        AD101

    Options:
        strict: raise when a backward()/autograd.grad() call is about to run a node
            whose saved tensor was modified in place, before the engine runs: the
            traceback ends at the backward() line, the report names the write, the notes
            give its call stack and PyTorch's own message (never for a graph that is not
            backpropagated); a write through `.data` raises when backward reaches the
            saved tensor (not for a value put back); silent problems raise too.
        silent: "warn" (default), "raise" or "ignore" for problems PyTorch does not
            raise for, such as a write through `.data` into a saved tensor.
        verify_saved: fingerprint saved tensors to catch writes no mode can see
            (NumPy views, DLPack, custom kernels); costs a reduction per saved tensor.
        capture: "patch" (default, cheap) wraps torch's in-place functions while
            active; "mode" uses a TorchFunctionMode that also sees `out=` writes, at
            about 18,000 instructions per torch call (a small call costs three times as much).
        mode: "light" (the default, a few percent of a training step): PyTorch's own
            version check finds the stale tensor, a log of writes names the line that
            wrote it. "full": every save is recorded (saved-tensor hooks), so reports
            also name the line that saved the tensor, and writes through `.data` or
            views kept across writes are caught; costs more. strict, verify_saved,
            silent="raise" and capture="mode" imply "full". The environment variable
            AUTOGRAD_DOCTOR_MODE sets the mode where none is given.
    """

    def __init__(self, strict: bool = False, silent: str = "warn", verify_saved: bool = False,
                 capture: str = "patch", mode: str | Mode | None = None):
        if silent not in SILENT_POLICIES:
            raise ValueError(f"silent must be one of {SILENT_POLICIES}, not {silent!r}")
        if capture not in CAPTURE_METHODS:
            raise ValueError(f"capture must be one of {CAPTURE_METHODS}, not {capture!r}")
        if mode is not None:
            Mode.parse(mode)  # a bad word fails here, where the user wrote it
        self.options = dict(strict=strict, silent=silent, verify_saved=verify_saved, capture=capture, mode=mode)
        self._doctors: list[Doctor] = []

    def __enter__(self) -> Doctor:
        doctor = Doctor(**self.options)
        doctor.start()
        self._doctors.append(doctor)
        return doctor

    def __exit__(self, exc_type, exc, tb) -> bool:
        doctor = self._doctors.pop()
        doctor.stop(failed=exc is not None)
        if exc is not None:
            explain_error(exc)
            # The exception goes on from here with this traceback: the user's frames and
            # torch's, as without the doctor (see recording/own_frames.py).
            hide_our_frames(exc)
        return False

    def __call__(self, function):
        """`@watch()`: the function runs under a fresh doctor at each call. Unlike
        ContextDecorator's, this wrapper's frame leaves no trace in a traceback (`__exit__`
        drops it)."""

        @functools.wraps(function)
        def watched(*args, **kwargs):
            with self:
                return function(*args, **kwargs)

        return watched


_installed: Doctor | None = None


def install(strict: bool = False, silent: str = "warn", verify_saved: bool = False,
            capture: str = "patch", mode: str | None = None) -> Doctor:
    """Turn the doctor on for the rest of the program (or until `uninstall()`)."""
    global _installed
    if _installed is not None:
        return _installed
    _installed = Doctor(strict=strict, silent=silent, verify_saved=verify_saved, capture=capture, mode=mode).start()
    return _installed


def uninstall() -> None:
    global _installed
    if _installed is not None:
        _installed.stop()
        _installed = None


def installed() -> Doctor | None:
    return _installed


__all__ = [
    "watch", "install", "uninstall", "installed", "diagnoses_of", "attach", "Doctor",
    "AutogradDoctorWarning", "AutogradDoctorError", "codes", "Any", "sys",
]
