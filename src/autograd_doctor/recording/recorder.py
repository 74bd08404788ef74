"""The run-time recorder: saved-tensor hooks for saves; the writes that hit saved memory.

Writes reach it from the wrappers in `patches.py` (or the mode in `function_mode.py`);
aliases (detach, views, NumPy) are tracked by the `AliasTracking` mixin in `aliases.py`.
Cost matters here (the doctor is meant to stay on while debugging), so the hot paths
(`pack`, `unpack`, writes that touch nothing saved) do the least possible work: no stack
formatting, no source reading, no analysis.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import re
import sys
import weakref
from typing import Any

import torch

from autograd_doctor import compat
from autograd_doctor.recording.aliases import AliasTracking
from autograd_doctor.recording.calls import (
    AUTOGRAD_GRAD, TENSOR_BACKWARD, WRITES_FIRST_ARG, called_by_torch, describe_write_arguments,
    _TENSOR_GETITEM, index_as_read, index_kinds, mask_missing_dims, overlapping_operand, pytorch_refuses_overlap, setitem_facts, written_region,
    written_tensors,
)
from autograd_doctor.recording.events import (
    BackwardCall, SavedRecord, SavedRef, ViewTracking, WriteEvent, byte_range, storage_key,
)
from autograd_doctor.recording import backward_reach, probe
from autograd_doctor.recording.grad_scalers import GradScalerCalls
from autograd_doctor.recording.gradient_clips import GradientClips
from autograd_doctor.recording.optimizer_groups import OptimizerGroups
from autograd_doctor.recording.frozen_constructions import FrozenConstructions
from autograd_doctor.recording.module_flags import ModuleFlags
from autograd_doctor.recording.closure_steps import ClosureSteps
from autograd_doctor.recording.data_copies import graph_cut_copy
from autograd_doctor.recording.optimizer_clears import OptimizerClearLog
from autograd_doctor.recording.optimizer_takeovers import OptimizerTakeovers
from autograd_doctor.recording.step_points import StepPoints
from autograd_doctor.recording.state_snapshots import StateSnapshots
from autograd_doctor.recording.gradient_states import GradientStates
from autograd_doctor.recording.element_overlap import elements_intersect
from autograd_doctor.recording.fingerprint import content_before_write, fingerprint
from autograd_doctor.recording.version_message import stale_saved_message
from autograd_doctor.recording.listener import (
    BackwardDone, BackwardFailed, BackwardStarted, CallFailed, DetachedAliasWrite, LeafCreated, Listener,
    NullListener, OptimizerStepStarting, OverlappingWrite, SilentSaveRead, StaleSaveAhead, StaleSaveRead,
    UntrackedWriteFound,
)
from autograd_doctor.recording.write_log import (
    LoggedWrite, WriteLog, in_loop, storage_base, user_stack_and_module, writes_through_data,
)
from autograd_doctor.recording.own_frames import CALLER_FRAME_NAME, call_as_caller
from autograd_doctor.recording.frames import (
    Site, _internal_file_cache, called_from_user_code, capture_user_stack, frame_locals,
    is_internal_file, is_user_frame, torch_module_dir,
)


_OPTIM_DIR = torch_module_dir() + "optim"
_NN_MODULES_DIR = torch_module_dir() + "nn"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# The original, so that our own detach() calls never go through the recording wrapper.
_detach = torch.Tensor.detach

# Writes recorded per saved record: the first is the culprit; a few more give context.
MAX_WRITES_PER_RECORD = 3

# Saves waiting to be registered by storage (see `pack`); past this they are registered.
MAX_PENDING = 4096


class Recorder(AliasTracking):
    """Records saves and the writes that hit saved memory (full mode), or logs writes
    (light mode); reports what it sees to its listener as typed events (listener.py).

    In the full mode `unpack` checks versions itself: a saved tensor whose version moved
    gives a `StaleSaveRead` (the listener returns the exception to raise); one written
    through an alias PyTorch cannot see (`.data`) a `SilentSaveRead`. In strict mode a
    backward()/autograd.grad() call about to run a node whose saved tensor was modified in
    place gives a `StaleSaveAhead` before the engine runs (the listener raises, so the
    traceback ends at the user's backward() line); a graph nobody backpropagates is no hazard.
    """

    def __init__(self, strict: bool = False, light: bool = False, listener: Listener | None = None):
        self.strict = strict
        # Light (the default mode): no saved-tensor hooks; writes go to `write_log`, matched
        # to the stale tensor after backward fails (see write_log.py and probe.py).
        self.light = light
        self.write_log = WriteLog()
        # Light mode: the `.data` writes since the last backward (checked when it starts).
        self.data_writes: list[LoggedWrite] = []
        # True while an optimizer step runs whose writes cannot touch anything watched
        # (set by the step-level hooks in `optimizer_step_started`): the wrappers then
        # call torch directly. Set through `_set_quiet_step`, which tells
        # `on_quiet_step_change` (patches.py puts torch's own methods back for the step).
        self.quiet_step = False
        self.on_quiet_step_change = None
        # (weak optimizer, class name, user stack of the step() call, seq), newest last.
        self.optimizer_steps: list[tuple] = []
        # Gradient clipping calls and where each optimizer last stepped (gradient_clips.py),
        # and what a few parameters' gradients held at the first steps (gradient_states.py).
        self.gradient_clips = GradientClips()
        # Parameter groups built from an iterator an earlier group read to the end (AD242).
        self.optimizer_groups = OptimizerGroups()
        # Embedding layers frozen by from_pretrained's default, from a tensor that required grad (AD241).
        self.frozen_constructions = FrozenConstructions()
        # `module.requires_grad = <bool>` assignments (module_flags.py).
        self.module_flags = ModuleFlags()
        # zero_grad() calls that threw gradients away, and the optimizers that stepped (optimizer_clears.py).
        self.optimizer_clears = OptimizerClearLog()
        # New optimizers that took over a stateful optimizer's parameters (optimizer_takeovers.py).
        self.optimizer_takeovers = OptimizerTakeovers()
        # L-BFGS steps whose closure ran no backward() (closure_steps.py).
        self.closure_steps = ClosureSteps()
        # Where the first optimizer steps ended on autograd's clock, and what they changed (step_points.py).
        self.step_points = StepPoints()
        # `state_dict()` results kept as snapshots (state_snapshots.py).
        self.state_snapshots = StateSnapshots()
        self.gradient_states = GradientStates()
        # Where an enabled GradScaler last unscaled each optimizer's gradients (grad_scalers.py).
        self.grad_scalers = GradScalerCalls()
        # Parameters and submodules replaced on a module (recording/parameter_swaps.py).
        self.parameter_swaps: list = []
        self.seq = itertools.count(1)
        # storage key -> weak refs to the live SavedRecords on that storage.
        self.saves_by_storage: dict[int, list[SavedRef]] = {}
        self.write_counts: dict[tuple[Any, int], int] = {}
        self.backward_calls: list[BackwardCall] = []
        # A backward()/autograd.grad() with create_graph=True ran: gradients with a graph are then made
        # on purpose (AD311 stays silent for the rest of the run).
        self.create_graph_seen = False
        self.pending: list[weakref.ref] = []
        # Strict mode: the saved records whose version a write moved, checked at the next
        # backward()/autograd.grad() (weak: they die with their graph).
        self.stale_saves: list[weakref.ref] = []
        self.probing = False
        self.probe_hits: list[SavedRecord] = []
        self.write_depth = 0  # >0 while a recorded write runs: nested torch writes are its parts
        # >0 while backward()/autograd.grad() runs (counted in write_depth too): a write the user's own
        # code makes there (a custom Function's backward, a hook) is logged, not taken for torch's.
        self.engine_depth = 0
        # Hears every event (see listener.py); the Doctor, or nobody.
        self.listener: Listener = listener if listener is not None else NullListener()
        # storage key -> the live views made of it (see call_view)
        self.view_storages: dict[int, ViewTracking] = {}
        # id(alias) -> (weak alias, weak source, Site of the detach() call)
        self.detach_aliases: dict[int, tuple] = {}
        # storage key -> (the storage, weakly; Site of the latest numpy() call on it) (verify_saved only)
        self.numpy_aliases: dict[int, Any] = {}
        # Free-form per-run state that analyses may keep (never tensors, only weak refs).
        self.state: dict[str, Any] = {}
        self.verify_saved = False
        self._drop_record = self._make_drop_callback()

    # ---- saves -----------------------------------------------------------------

    def _make_drop_callback(self):
        registry = self.saves_by_storage

        def drop(ref: SavedRef) -> None:
            refs = registry.get(ref.key)
            if refs is not None:
                try:
                    refs.remove(ref)
                except ValueError:
                    pass
                if not refs:
                    registry.pop(ref.key, None)

        return drop

    def pack(self, tensor):
        try:
            # The innermost user frame, inlined from capture_user_stack: this runs for
            # every tensor autograd saves.
            frame = sys._getframe(1)
            internal = _internal_file_cache
            while frame is not None:
                filename = frame.f_code.co_filename
                is_internal = internal.get(filename)
                if is_internal is None:
                    is_internal = is_internal_file(filename)
                if not is_internal and frame.f_code.co_name != CALLER_FRAME_NAME:
                    break
                frame = frame.f_back
            stack = (Site(frame.f_code, frame.f_lasti),) if frame is not None else ()
            grad_fn = tensor.grad_fn
            # The node that saves the tensor is the newest one: autograd makes it before it
            # saves its inputs and outputs (strict mode finds it by this number at backward).
            saving_node = _next_sequence_nr() - 1
            if grad_fn is not None and grad_fn._sequence_nr() == saving_node:
                # An output of the node being made (the newest): held as itself it would
                # hold that node, which holds this record, a cycle. Keep a detach()ed alias
                # (same memory and version counter, no grad_fn), as PyTorch does.
                record = SavedRecord(_detach(tensor), tensor._version, stack, next(self.seq), tensor.output_nr, True,
                                     saving_node)
            else:
                # An input (a leaf, or a non-leaf made by an earlier node): PyTorch keeps such
                # a tensor itself, and so can we (what unpack returns is re-wrapped by
                # autograd either way), saving a detach() per save.
                record = SavedRecord(tensor, tensor._version, stack, next(self.seq), node_seq=saving_node)
                if grad_fn is not None:
                    record.output_nr = tensor.output_nr
                    # PyTorch checks on unpack that detach_() did not strip its grad_fn. Our
                    # hooks switch that check off, so `unpack` does it.
                    record.saved_input = tensor
            # Registered by storage only when a write needs it (see `_register_pending`),
            # so a forward pass without in-place writes pays almost nothing here.
            pending = self.pending
            pending.append(weakref.ref(record))
            if len(pending) > MAX_PENDING:
                # Forward passes with no write and no backward (inference in grad mode)
                # would grow the list forever; registering drops the dead entries.
                self._register_pending()
            if self.verify_saved:
                record.fingerprint = fingerprint(tensor)
            return record
        except Exception:
            # Never break the user's program; an unrecorded save is just not diagnosed.
            return _Unrecorded(tensor)

    def _register_pending(self) -> None:
        pending, self.pending = self.pending, []
        registry = self.saves_by_storage
        for weak in pending:
            record = weak()
            if record is None:
                continue
            key = record.locate()
            if key is None:
                continue
            ref = SavedRef(record, self._drop_record)
            ref.key = key
            refs = registry.get(key)
            if refs is None:
                registry[key] = [ref]
            else:
                refs.append(ref)

    def unpack(self, packed):
        if type(packed) is not SavedRecord:
            return packed.unpack()
        alias = packed.alias
        if self.probing:
            self.probe_hits.append(packed)
            return alias
        if alias._version != packed.version:
            raise self._stale_error(packed)
        saved_input = getattr(packed, "saved_input", None)
        if saved_input is not None and saved_input.grad_fn is None:
            raise RuntimeError(DETACHED_IN_PLACE_MESSAGE)
        if (packed.silent_writes or packed.fingerprint is not None) and not packed.reported:
            self.listener.silent_save_read(SilentSaveRead(packed))
        return alias

    def content_changed(self, record: SavedRecord) -> bool:
        return record.fingerprint is not None and fingerprint(record.alias) != record.fingerprint

    def _stale_error(self, record: SavedRecord) -> BaseException:
        try:
            error = self.listener.stale_save_read(StaleSaveRead(record))
            if error is not None:
                return error
        except Exception:
            pass
        own = grad_fn_error(record)
        if own is not None:
            return own
        return RuntimeError(pytorch_version_message(record, current_autograd_node()))

    def live_records(self, key: int | None) -> list[SavedRecord]:
        if key is None:
            return []
        refs = self.saves_by_storage.get(key)
        if not refs:
            return []
        records = []
        for ref in refs:
            record = ref()
            if record is not None:
                records.append(record)
        return records

    # ---- writes ----------------------------------------------------------------

    def before_write(self, targets: list, op: str, args: tuple = ()) -> list[tuple[SavedRecord, WriteEvent, Any]]:
        """Find live saved tensors that this write touches; record the write against them.
        Each hit says whether the written elements are some of the saved tensor's (not only
        its bytes). Before the first such write that may not bump the saved tensor's version
        (not an optimizer's, not one autograd records), the saved values get a fingerprint,
        so that a write undone before backward is not reported (`content_restored`)."""
        hits: list[tuple[SavedRecord, WriteEvent, Any]] = []
        if self.pending:
            self._register_pending()
        registry = self.saves_by_storage
        if not registry:
            return hits
        for target in targets:
            key = storage_key(target)
            if key is None or key not in registry:
                continue
            start, stop = byte_range(target)
            touched = [r for r in self.live_records(key) if r.overlaps(key, start, stop)]
            if not touched:
                continue
            stack = capture_user_stack(2, limit=4)
            site = stack[0] if stack else None
            count_key = (site.code, site.lasti) if site is not None else (None, 0)
            execution = self.write_counts.get(count_key, 0) + 1
            self.write_counts[count_key] = execution
            region = written_region(target, op, args)
            for record in touched:
                fresh = record.alias._version == record.version
                if not fresh:
                    continue  # already stale: the first write is the one to report
                event = WriteEvent(op, stack, target._version, next(self.seq))
                event.execution = execution
                event.changes_saved_elements = elements_intersect(region, record.alias)
                self._describe_write_context(event, target)
                if (event.changes_saved_elements and record.content_before_write is None
                        and event.optimizer is None and not target.requires_grad):
                    record.content_before_write = content_before_write(record.alias)
                hits.append((record, event, target))
        return hits

    def content_restored(self, record: SavedRecord) -> bool:
        """The saved tensor holds again the values it had before the first write to it
        (a perturb-and-restore, as torch.autograd.gradcheck does)."""
        before = record.content_before_write
        return before is not None and content_before_write(record.alias) == before

    def after_write(self, hits: list[tuple[SavedRecord, WriteEvent, Any]]) -> None:
        """Sort each hit into a version-bumping write or a silent one; in strict mode, keep the
        records made stale for the next backward to check."""
        for record, event, target in hits:
            event.version_after = target._version
            if record.alias._version == record.version:
                if not event.changes_saved_elements:
                    continue  # neither the values nor the version changed: nothing happened to it
                # The memory changed but the saved tensor's version did not (a `.data` or
                # other alias with its own version counter): PyTorch will not notice, and
                # backward would silently use the new values, unless the write is undone.
                event.through_alias = True
                if len(record.silent_writes) < MAX_WRITES_PER_RECORD:
                    record.silent_writes = (*record.silent_writes, event)
                continue
            if len(record.writes) < MAX_WRITES_PER_RECORD:
                record.writes = (*record.writes, event)
            if self.strict and len(record.writes) == 1:
                # Not raised here: a graph that is kept but never backpropagated (a reference
                # recomputed with grad on, a forward kept for logging) is no hazard. Decided
                # when a backward is about to run the node that saved it.
                self.stale_saves.append(weakref.ref(record))

    def _describe_write_context(self, event: WriteEvent, target) -> None:
        """Cheap facts about the write that only its live frames can tell (rare path)."""
        try:
            event.target_ref = weakref.ref(target)
        except TypeError:
            pass
        frame = sys._getframe(1)
        while frame is not None and not is_user_frame(frame):
            filename = frame.f_code.co_filename
            if filename.startswith(_OPTIM_DIR) and frame.f_code.co_name == "step" and event.optimizer is None:
                owner = frame_locals(frame).get("self")
                if owner is not None:
                    event.optimizer = type(owner).__name__
            elif filename.startswith(_NN_MODULES_DIR) and frame.f_code.co_name == "forward" and event.module_ref is None:
                owner = frame_locals(frame).get("self")
                if isinstance(owner, torch.nn.Module):
                    event.module_class = type(owner).__name__
                    event.module_ref = weakref.ref(owner)
            frame = frame.f_back
        if frame is not None:
            # Containers are read for every write into a saved tensor (this path is rare): a
            # method write `c["k"].copy_(v)` writes into an entry of `c` as much as `c[k][i] = v`.
            event.loop_values, event.container_kinds = _locals_on_line(frame, scalars=True, containers=True)

    def record_backward(self, kwargs: dict, func, args: tuple) -> BackwardCall:
        retain = kwargs.get("retain_graph")
        if retain is None and func is TENSOR_BACKWARD and len(args) > 2:
            retain = args[2]
        if not self.create_graph_seen:
            create = kwargs.get("create_graph")
            position = 4 if func is AUTOGRAD_GRAD else 3
            if create is None and len(args) > position:
                create = args[position]
            self.create_graph_seen = bool(create)
        call = BackwardCall(capture_user_stack(2, limit=2), bool(retain), next(self.seq), _newest_node(args, kwargs))
        self.backward_calls.append(call)
        del self.backward_calls[:-8]
        return call

    def call_write(self, func, op: str, kind: int, args: tuple, kwargs: dict):
        """Run a write the user asked for, recording it when it touches saved memory."""
        if self.write_depth:
            if self.write_depth == self.engine_depth and called_from_user_code():
                return self._call_write_logged_in_engine(func, op, kind, args, kwargs)
            return call_as_caller(func, args, kwargs)
        if self.light:
            return self._call_write_logged(func, op, kind, args, kwargs)
        hits = ()
        if self.pending or self.saves_by_storage:
            try:
                hits = self.before_write(written_tensors(kind, args, kwargs), op, args)
                if hits:
                    describe_write_arguments(hits, op, args)
            except Exception:
                hits = ()
        deferred = None
        leaf = None  # (a leaf that requires grad, its version): a weight updated by hand
        if kind == WRITES_FIRST_ARG and args and isinstance(args[0], torch.Tensor):
            deferred = self._check_write_hazards(op, args, kwargs)
            self._note_graph_cut_copy(op, kind, args)
            if args[0].requires_grad and args[0].is_leaf:
                leaf = (args[0], args[0]._version)
        self.write_depth += 1
        try:
            result = call_as_caller(func, args, kwargs)
        except Exception as error:
            self.listener.call_failed(_call_failed(error, func, args, kwargs))
            raise
        finally:
            self.write_depth -= 1
        if deferred is not None:
            self.listener.overlapping_write(deferred)  # PyTorch did not refuse it after all
        if leaf is not None:
            self._log_leaf_write(op, *leaf)
        if hits:
            try:
                self.after_write(hits)
            except Exception:
                pass
        return result

    def _log_leaf_write(self, op: str, target: torch.Tensor, before: int) -> None:
        """Full mode: log a write into a leaf that requires grad (a weight written under no_grad)
        as the default mode logs every write, so that a later failure can name it (AD302: the
        weights of a freed graph changed between two backward() calls)."""
        try:
            if target._version == before:
                return
            stack, module_class, _user_frame = user_stack_and_module(2)
            del _user_frame  # no frame is kept
            entry = LoggedWrite(op, stack, storage_base(target), before, next(self.seq))
            entry.version_after = target._version
            entry.module_class = module_class
            self.write_log.add(entry, target)
        except Exception:
            pass  # an unlogged write is just not named later

    def write_failed(self, error: Exception, func, args: tuple, kwargs: dict) -> None:
        """A write that skipped the recording (nothing it could hit) and that PyTorch refused."""
        if self.write_depth:
            return  # part of a recorded write: that write reports the failure
        try:
            self.listener.call_failed(_call_failed(error, func, args, kwargs))
        except Exception:
            pass  # the user's exception comes through unchanged

    def _before_data_write(self, op: str, kind: int, args: tuple):
        """For a write through `.data` (the user's line says so) about to run: (the elements it
        will write, a fingerprint of their values now); None for every other write, found
        cheaply (a `.data` alias never requires grad). Checked at the next backward
        (`_check_data_writes`) against the tensors the graph saved."""
        if (kind != WRITES_FIRST_ARG or not args
                or len(self.data_writes) >= MAX_DATA_WRITES):
            return None
        target = args[0]
        if not isinstance(target, torch.Tensor) or target.requires_grad:
            return None
        try:
            stack = capture_user_stack(2, limit=1)
            if not stack or not writes_through_data(stack[0]):
                return None
            part = _written_part(op, target, args)
            written = (part.storage_offset(), tuple(part.shape), tuple(part.stride()), part.dtype)
            return written, content_before_write(part)
        except Exception:
            return None

    def _note_graph_cut_copy(self, op: str, kind: int, args: tuple) -> None:
        """A copy into a parameter through `.data` of a value that requires grad, inside a
        forward (recording/data_copies.py): told to the listener, checked at the next step."""
        if (kind != WRITES_FIRST_ARG or len(args) < 2 or not isinstance(args[1], torch.Tensor)
                or not args[1].requires_grad or not isinstance(args[0], torch.Tensor) or args[0].requires_grad
                or not torch.is_grad_enabled()):
            return
        try:
            event = graph_cut_copy(op, args)
        except Exception:
            return
        if event is not None:
            self.listener.graph_cut_copy(event)

    def _check_write_hazards(self, op: str, args: tuple, kwargs: dict) -> OverlappingWrite | None:
        """Writes that are wrong whatever autograd saved: into memory an operand reads in
        another layout, or through a detach() alias of a tensor whose graph is live.

        Returns an overlapping write that PyTorch itself will most likely refuse: the caller
        reports it only after the write succeeds, so that when PyTorch raises, the user sees
        the diagnosis once, on PyTorch's error, not also as a warning."""
        target = args[0]
        operand = alias_source = None
        try:
            if self.view_storages:
                self._count_view_storage_write(target)
            if len(args) + len(kwargs) > 1:
                operand = overlapping_operand(target, op, args, kwargs)
            if self.detach_aliases:
                alias_source = self.live_detach_source(target)
            # Overlap and alias hazards are about the user's own writes; torch's Python
            # code (optimizers, nn.init, functional) makes thousands of writes per step.
            if (operand is not None or alias_source is not None) and called_by_torch():
                operand = alias_source = None
        except Exception:
            operand = alias_source = None  # never let our checks break the user's write
        deferred = None
        # The callbacks may raise on purpose (silent="raise"), before the harm is done.
        if operand is not None:
            event = OverlappingWrite(op, target, operand, capture_user_stack(2, limit=3))
            if pytorch_refuses_overlap(event.target, event.operand):
                deferred = event
            else:
                self.listener.overlapping_write(event)
        if alias_source is not None:
            source, detach_site = alias_source
            self.listener.detached_alias_write(
                DetachedAliasWrite(op, target, source, detach_site, capture_user_stack(2, limit=3)))
        return deferred

    def _call_write_logged_in_engine(self, func, op: str, kind: int, args: tuple, kwargs: dict):
        """A write the user's code makes while backward() runs (a custom Function's backward that
        writes its result into a tensor it saved): run it and log it (memory, versions, user line),
        so that the error it causes names it. Nothing else is checked there."""
        try:
            targets = written_tensors(kind, args, kwargs)
            versions = [target._version for target in targets]
        except Exception:
            targets, versions = [], []
        self.write_depth += 1
        try:
            result = call_as_caller(func, args, kwargs)
        finally:
            self.write_depth -= 1
        try:
            for target, before in zip(targets, versions):
                after = target._version
                if after == before:
                    continue
                stack, module_class, _frame = user_stack_and_module(1)
                _frame = None
                entry = LoggedWrite(op, stack, storage_base(target), before, next(self.seq))
                entry.version_after = after
                entry.module_class = module_class
                if op.endswith("__setitem__") and len(args) >= 3:
                    entry.value_is_scalar, entry.index_is_bool_mask = setitem_facts(args[1], args[2])
                    entry.index_kinds = index_kinds(args[1])
                    entry.mask_missing_dims = mask_missing_dims(target, args[1])
                self.write_log.add(entry, target)
        except Exception:
            pass  # an unlogged write is just not named later
        return result

    def _call_write_logged(self, func, op: str, kind: int, args: tuple, kwargs: dict):
        """Light mode: run the write and log it (memory, versions, user line); no lookup."""
        deferred = None
        if kind == WRITES_FIRST_ARG and args and isinstance(args[0], torch.Tensor):
            targets = [args[0]] if "out" not in kwargs else written_tensors(kind, args, kwargs)
            deferred = self._check_write_hazards(op, args, kwargs)
        elif called_by_torch():
            # torch's own list writes outside optimizer steps (clip_grad_norm_ scaling the
            # gradients): gradients are not what a forward pass saves.
            return call_as_caller(func, args, kwargs)
        else:
            targets = written_tensors(kind, args, kwargs)
        try:
            versions = [target._version for target in targets]
        except Exception:
            targets, versions = [], []
        data_write = self._before_data_write(op, kind, args)
        self._note_graph_cut_copy(op, kind, args)
        self.write_depth += 1
        try:
            result = call_as_caller(func, args, kwargs)
        except Exception as error:
            self.listener.call_failed(_call_failed(error, func, args, kwargs))
            raise
        finally:
            self.write_depth -= 1
        if deferred is not None:
            self.listener.overlapping_write(deferred)  # PyTorch did not refuse it after all
        try:
            stack = None
            for target, before in zip(targets, versions):
                after = target._version
                if after == before:
                    continue
                if stack is None:
                    stack, module_class, frame = user_stack_and_module(1)
                    loop_values, container_kinds = {}, {}
                    if frame is not None:
                        loop_values, container_kinds = _locals_on_line(
                            frame, scalars=in_loop(frame.f_code, frame.f_lasti),
                            containers=_may_write_a_container_entry(op, args))
                    frame = None
                entry = LoggedWrite(op, stack, storage_base(target), before, next(self.seq))
                entry.version_after = after
                entry.module_class = module_class
                entry.loop_values = loop_values
                entry.container_kinds = container_kinds
                if op.endswith("__setitem__") and len(args) >= 3:
                    entry.value_is_scalar, entry.index_is_bool_mask = setitem_facts(args[1], args[2])
                    entry.index_kinds = index_kinds(args[1])
                    entry.mask_missing_dims = mask_missing_dims(target, args[1])
                self.write_log.add(entry, target)
                if data_write is not None and target is args[0]:
                    entry.autograd_seq = _next_sequence_nr()
                    entry.written, entry.content_before = data_write
                    self.data_writes.append(entry)
        except Exception:
            pass  # an unlogged write is just not named later
        return result

    # ---- optimizer steps ---------------------------------------------------------

    def optimizer_step_started(self, optimizer) -> None:
        """Before an optimizer's step(): remember where it was called; its own writes need
        no per-tensor look-up when nothing saved is alive (or in light mode, never)."""
        stack = capture_user_stack(1, limit=2)
        self.optimizer_steps.append((weakref.ref(optimizer), type(optimizer).__name__, stack, next(self.seq)))
        del self.optimizer_steps[:-4]
        self.optimizer_takeovers.step_started(optimizer, stack)
        self.listener.optimizer_step_starting(OptimizerStepStarting(optimizer, stack, self.parameter_swaps))
        if self.light:
            self._set_quiet_step(True)
            return
        if self.pending:
            self._register_pending()
        self._set_quiet_step(not self.saves_by_storage and not self.view_storages)

    def _set_quiet_step(self, quiet: bool) -> None:
        if quiet == self.quiet_step:
            return
        self.quiet_step = quiet
        if self.on_quiet_step_change is not None:
            self.on_quiet_step_change(self, quiet)

    def optimizer_step_done(self, optimizer=None) -> None:
        self._set_quiet_step(False)
        if optimizer is not None:
            self.gradient_clips.step_done(optimizer, next(self.seq))
            stack = next((stack for reference, _name, stack, _seq in reversed(self.optimizer_steps)
                          if reference() is optimizer), None)
            self.gradient_states.step_done(optimizer, stack)
            self.optimizer_takeovers.step_done(optimizer, stack or ())
            self.step_points.step_done(optimizer)

    def optimizer_writes_into(self, tensor, saved_version: int, found_version: int) -> list[WriteEvent]:
        """Light mode: the newest optimizer step whose parameters include `tensor`'s memory."""
        storage = storage_base(tensor)
        for optimizer_ref, name, stack, seq in reversed(self.optimizer_steps):
            optimizer = optimizer_ref()
            if optimizer is None:
                continue
            for group in optimizer.param_groups:
                for parameter in group["params"]:
                    if storage_base(parameter) == storage:
                        event = WriteEvent(f"{name}.step", stack, saved_version, seq)
                        event.version_after = found_version
                        event.optimizer = name
                        try:
                            event.target_ref = weakref.ref(parameter)
                        except TypeError:
                            pass
                        return [event]
        return []

    def call_backward(self, func, args: tuple, kwargs: dict):
        if self.write_depth:
            return call_as_caller(func, args, kwargs)
        self._set_quiet_step(False)  # a closure's backward inside step() (LBFGS): the user's code again
        self.step_points.backward_starting()  # the steps that ran before this backward(), not in it
        try:
            call = self.record_backward(kwargs, func, args)
            self.listener.backward_started(BackwardStarted(call, func, args, kwargs))
        except Exception:
            call = None
        if call is not None and func is not AUTOGRAD_GRAD:  # autograd.grad leaves .grad alone
            try:
                self.gradient_states.backward_starting(call, probe.roots_of(args, kwargs))
            except Exception:
                pass
            try:
                self.gradient_clips.backward_starting()
            except Exception:
                pass
        if self.data_writes:
            self._check_data_writes(args, kwargs)  # may raise on purpose (silent="raise")
        if self.stale_saves and call is not None:
            self._check_stale_saves(call, func, args, kwargs)  # raises on purpose (strict)
        self.write_depth += 1
        self.engine_depth += 1
        try:
            result = call_as_caller(func, args, kwargs)
        except Exception as error:
            if call is not None:
                self.listener.backward_failed(BackwardFailed(error, call, args, kwargs))
            raise
        finally:
            self.write_depth -= 1
            self.engine_depth -= 1
        if self.pending:
            # The graph's saved tensors were freed by this backward (unless retained):
            # register what is still alive now, so that later writes find an empty
            # registry fast when nothing is.
            try:
                self._register_pending()
            except Exception:
                pass
        if call is not None and func is not AUTOGRAD_GRAD:
            try:
                self.optimizer_clears.backward_done()  # which .grad tensors this backward() left (AD153)
            except Exception:
                pass
            try:
                self.optimizer_groups.backward_done(self.optimizer_clears)  # gradients only growing (AD317)
            except Exception:
                pass
        if call is not None:
            self.listener.backward_done(BackwardDone(call, func, args, kwargs, result))
        return result

    def _check_data_writes(self, args: tuple, kwargs: dict) -> None:
        """Light mode, before backward: did a `.data` write change a tensor this graph saved
        earlier? Runs only after such writes (rare), once per backward."""
        writes, self.data_writes = self.data_writes, []
        try:
            hits = probe.saves_changed_by(probe.roots_of(args, kwargs), writes)
        except Exception:
            return
        for hit in hits:
            record = SavedRecord(hit.tensor.detach(), hit.tensor._version, (), next(self.seq))
            record.silent_writes = (hit.write.to_event(),)
            self.listener.untracked_write_found(UntrackedWriteFound(record, hit.node, hit.slot))

    def _check_stale_saves(self, call: BackwardCall, func, args: tuple, kwargs: dict) -> None:
        """Strict mode, before the engine runs: does this call run a node whose saved tensor a
        write modified in place? Then the listener raises, at the user's backward() line."""
        self.stale_saves = [ref for ref in self.stale_saves if ref() is not None]
        try:
            found = self._stale_save_ahead(func, args, kwargs)
        except Exception:
            return  # PyTorch's own check still fails the backward, and the doctor explains it
        if found is not None:
            record, node, slot = found
            self.listener.stale_save_ahead(StaleSaveAhead(record, node, slot, call))

    def _stale_save_ahead(self, func, args: tuple, kwargs: dict):
        """(record, node, slot) for the newest node this call will run that holds a stale
        saved record, found by the node's sequence number (`pack`); None when none does."""
        by_node: dict[int, list[SavedRecord]] = {}
        for ref in self.stale_saves:
            record = ref()
            if record is not None and record.alias._version != record.version:
                by_node.setdefault(record.node_seq, []).append(record)
        if not by_node:
            return None
        nodes = backward_reach.nodes_to_run(func, args, kwargs)
        found, found_number = None, -1
        for node in nodes or ():
            try:
                number = node._sequence_nr()
            except Exception:
                continue
            candidates = by_node.get(number)
            if candidates is None or number <= found_number:
                continue
            for slot, hits in self._probe_slots(node):
                record = next((hit for hit in hits if any(hit is stale for stale in candidates)), None)
                if record is not None:
                    found, found_number = (record, node, slot), number
                    break
        return found

    def call_factory(self, func, args: tuple, kwargs: dict):
        """A factory called with requires_grad=True, or requires_grad_(): remember where."""
        result = call_as_caller(func, args, kwargs)
        if isinstance(result, torch.Tensor):
            try:
                stack = capture_user_stack(1, limit=1)
                self.listener.leaf_created(LeafCreated(result, stack[0] if stack else None))
            except Exception:
                pass
        return result

    # ---- post-mortem helpers ---------------------------------------------------

    def _probe_slots(self, node) -> list[tuple[str, list[SavedRecord]]]:
        """(slot, our SavedRecords read from it) for each saved slot of `node`: its
        `_saved_*` attributes, and for a custom autograd.Function the positions of
        ctx.save_for_backward. Reads go through our unpack in probing mode, so stale
        slots do not raise."""
        slots: list[tuple[str, list[SavedRecord]]] = []
        if node is None:
            return slots
        previous = self.probing
        self.probing = True
        try:
            for name in dir(node):
                if not name.startswith("_saved_"):
                    continue
                self.probe_hits.clear()
                try:
                    getattr(node, name)
                except Exception:
                    continue
                if self.probe_hits:
                    slots.append((name[len("_saved_"):], list(self.probe_hits)))
            if getattr(type(node), "saved_tensors", None) is not None:  # without reading it
                self.probe_hits.clear()
                try:
                    node.saved_tensors
                except Exception:
                    pass
                else:
                    slots.extend((f"saved_tensors[{index}]", [hit]) for index, hit in enumerate(self.probe_hits))
        finally:
            self.probing = previous
            self.probe_hits.clear()
        return slots

    def saved_records_of(self, node) -> dict[str, SavedRecord]:
        """slot name -> our SavedRecord, for each saved slot of `node` that we packed."""
        return {slot: hits[0] for slot, hits in self._probe_slots(node)}

    def find_slot(self, node, record: SavedRecord) -> str | None:
        """Which saved slot of `node` holds `record`."""
        for slot, hits in self._probe_slots(node):
            if any(hit is record for hit in hits):
                return slot
        return None


DETACHED_IN_PLACE_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead")



def _call_failed(error: BaseException, func, args: tuple, kwargs: dict) -> CallFailed:
    """The event for a write PyTorch refused, with the user's stack and the torch.nn module (if
    any) whose forward made the write."""
    try:
        module_class = user_stack_and_module(2)[1]
    except Exception:
        module_class = None
    return CallFailed(error, func, args, kwargs, capture_user_stack(2, limit=3), module_class)

# The sequence number the next autograd node will get.
_next_sequence_nr = torch._C._autograd._get_sequence_nr
def _written_part(op: str, target, args: tuple):
    """The elements a write changes: for `t[index] = v` with basic indexing, the view
    `t[index]` (read without recording: `.data` writes are rare), else all of `t`."""
    if op.endswith("__setitem__") and len(args) >= 2:
        try:
            with torch.no_grad():
                part = _TENSOR_GETITEM(target, index_as_read(args[1]))
            if storage_base(part) == storage_base(target):
                return part
        except Exception:
            pass
    return target


# `.data` writes remembered between two backward calls (light mode).
MAX_DATA_WRITES = 16


def current_autograd_node():
    """The node whose backward is running on this thread (None outside backward)."""
    getter = compat.lookup("torch._C._current_autograd_node")
    try:
        return getter() if getter is not None else None
    except Exception:
        return None


class _Unrecorded:
    """Returned by `pack` when recording failed: holds the tensor as autograd would."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def unpack(self):
        return self.tensor


def _locals_on_line(frame, scalars: bool, containers: bool) -> tuple[dict[str, str], dict[str, str]]:
    """What the locals named on the frame's current line hold, in one reading of the line: the
    values of simple scalars such as loop variables ({"i": "2"}) when `scalars`, and the kinds of
    plain tuples, lists and dicts ({"state": "tuple"}) when `containers`."""
    values, kinds = {}, {}
    if not (scalars or containers):
        return values, kinds
    try:
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        if not scalars and "[" not in line:
            # A container's kind serves only a name subscripted on the line (`c["k"].copy_(v)`,
            # fixes._container_entry): a line without a subscript needs no copy of the frame's
            # locals (an in-place activation or `+=` in a forward: every step).
            return values, kinds
        local_vars = frame_locals(frame)
        for name in _names_on(line):
            value = local_vars.get(name)
            if scalars and not (isinstance(value, bool) or value is None) and (
                    isinstance(value, (int, float)) or (isinstance(value, str) and len(value) < 40)):
                values[name] = repr(value)
            if containers and type(value) in (tuple, list, dict):
                kinds[name] = type(value).__name__
        return values, kinds
    except Exception:
        return {}, {}


@functools.lru_cache(maxsize=256)
def _names_on(line: str) -> frozenset:
    """The identifiers a source line names (the same few lines are written from at every step)."""
    return frozenset(_IDENTIFIER.findall(line))


def _writes_a_whole_tensor_by_index(op: str, args: tuple) -> bool:
    """`t[index] = v` where `t` is no view: when the line reads `c[k][index] = v`, `c[k]` took
    an entry of a Python container, not a view of a tensor `c`."""
    return (op.endswith("__setitem__") and bool(args) and isinstance(args[0], torch.Tensor)
            and args[0]._base is None)


def _may_write_a_container_entry(op: str, args: tuple) -> bool:
    """Whether the line may write into an entry of a Python container, so that the kinds of the
    containers it names are worth reading: `c[k][index] = v`, and an in-place method on a tensor
    in the graph (`batch["reward"].copy_(v)`). An optimizer's in-place update of a leaf is
    neither, so the frequent writes pay nothing."""
    if _writes_a_whole_tensor_by_index(op, args):
        return True
    target = args[0] if args else None
    name = op.rsplit(".", 1)[-1]
    return (name.endswith("_") and not name.endswith("__") and isinstance(target, torch.Tensor)
            and target.grad_fn is not None)


def _newest_node(args: tuple, kwargs: dict) -> int | None:
    """The highest autograd sequence number among the roots of a backward()/grad() call."""
    roots = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
    if isinstance(roots, torch.Tensor):
        roots = (roots,)
    newest = None
    if isinstance(roots, (list, tuple)):
        for root in roots:
            node = root.grad_fn if isinstance(root, torch.Tensor) else None
            if node is not None:
                try:
                    number = node._sequence_nr()
                except AttributeError:
                    continue
                newest = number if newest is None else max(newest, number)
    return newest


def grad_fn_error(record: SavedRecord) -> RuntimeError | None:
    """PyTorch's own error for a saved input whose `grad_fn` cannot be read, else None.

    An output of a function that returns several views (unbind, split, chunk, iterating a
    tensor) whose base was then modified in place raises from `.grad_fn` ("Output 3 of Unbind is
    a view and its base ... has been modified inplace"). The engine reads the same grad_fn to word
    its version message, so for such a save PyTorch raises that error, not the version one: the
    doctor raises it too (a fresh copy, no frame of ours) and has no version error to explain."""
    if record.is_output:
        return None
    try:
        record.alias.grad_fn
    except RuntimeError as error:
        return RuntimeError(*error.args)
    return None


def pytorch_version_message(record: SavedRecord, saving_node) -> str:
    """The message PyTorch raises for this stale save, word for word (version_message.py);
    `saving_node` is the node whose backward unpacks it."""
    # PyTorch names a saved input's current grad_fn (none for a leaf), a saved output's saver.
    node = saving_node if record.is_output else record.alias.grad_fn
    return stale_saved_message(record.alias, record.version, node, record.output_nr)


class StrictViolation(RuntimeError):
    """An error the doctor raises on purpose (strict mode, silent="raise"): the recorder's
    guards let it through instead of swallowing it."""
