"""`state_dict()` results kept as snapshots, and loads of them that restore nothing.

`module.state_dict()` returns the module's own tensors (detached, sharing their memory), not
copies. Kept as "the best weights so far" (`best = model.state_dict()`), it follows every later
optimizer step, and `model.load_state_dict(best)` at the end loads the current weights into
themselves: nothing is restored, and nothing fails.

While a doctor runs, `nn.Module.state_dict` and `nn.Module.load_state_dict` are wrapped. A
top-level `state_dict()` call (not a submodule's part of it) is remembered: the module and a
few of its entries weakly, their version counters, and the user's stack. A `load_state_dict(d)`
of a dict holding those entries (the snapshot, or a shallow copy of it) into the module it came
from, whose tensors are still that module's own and have been written since, emits `StaleSnapshotLoaded` after the load
returns (analysis/state_snapshot.py builds AD217). A load that fails raises as without the
doctor. Only weak references and integers are kept.

A `load_state_dict(d)` whose dict holds the receiving module's own current tensors (a target
network refreshed with `target.load_state_dict(target.state_dict())` where the online network
was meant) copies each tensor onto itself. Where the module is in no optimizer that stepped and
a module of the same class bound in the caller's frame (a local, or an attribute of `self`) is,
`OwnStateLoaded` is decided before the load and emitted after it (analysis/own_state_loads.py
builds AD169). A module loading its own state where nothing else is trained (a round-trip test)
is not reported. A module loading its own state through another of its names, itself an item of a
list of modules of its class in the caller's frame (a federated average that *is* client 0, loaded
into every client), emits `OwnStateLoaded` with those names and the item's place (AD182). Every
load that returns emits `ModuleStateLoaded` (AD171 reads the module's
classes: a data-dependent initialisation whose flag is not in the state dict).
"""

from __future__ import annotations

import collections
import functools
import itertools
import sys
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack, frame_locals, is_user_frame
from autograd_doctor.recording.listener import ModuleStateLoaded, OwnStateLoaded, StaleSnapshotLoaded
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

# Snapshots remembered per recorder, and tensors sampled in each.
LOG_SIZE = 8
SAMPLED_TENSORS = 32


@dataclass
class StateSnapshot:
    """One top-level `module.state_dict()`: the module (weakly), the sampled entries (each
    tensor weakly, with its version counter when taken), and where it was taken. The entries,
    not the dict, identify it: a shallow copy (`dict(model.state_dict())`) holds the same ones."""

    module_ref: weakref.ref
    entries: dict  # key -> (weak tensor, version when taken)
    stack: tuple[Site, ...]

    def held_by(self, state) -> bool:
        return all(state.get(key) is tensor() for key, (tensor, _version) in self.entries.items())


class StateSnapshots:
    """The `state_dict()` results a recorder saw, newest last."""

    def __init__(self):
        self.snapshots: collections.deque = collections.deque(maxlen=LOG_SIZE)

    def remember(self, module, state: dict) -> None:
        entries = {}
        for key, value in state.items():
            if isinstance(value, torch.Tensor) and not value.is_inference():
                entries[key] = (weakref.ref(value), value._version)
                if len(entries) >= SAMPLED_TENSORS:
                    break
        if entries:
            self.snapshots.append(StateSnapshot(weakref.ref(module), entries, capture_user_stack(1, limit=2)))

    def stale_load(self, module, state) -> StaleSnapshotLoaded | None:
        """The event for loading `state` into `module`, if it holds the entries of a snapshot of
        that module that still share its memory and were written since the snapshot was taken."""
        if not hasattr(state, "get"):
            return None
        snapshot = next((s for s in reversed(self.snapshots) if s.held_by(state)), None)
        if snapshot is None or snapshot.module_ref() is not module:
            return None
        own = dict(module.named_parameters())
        own.update(module.named_buffers())
        changed = 0
        for key, (_tensor, version) in snapshot.entries.items():
            value, current = state.get(key), own.get(key)
            if not isinstance(current, torch.Tensor):
                return None
            if value.data_ptr() != current.data_ptr() or value.stride() != current.stride():
                return None  # the module's tensor was replaced: a real load
            changed += value._version != version
        if not changed:
            return None
        return StaleSnapshotLoaded(type(module).__name__, changed, len(snapshot.entries), snapshot.stack,
                                   capture_user_stack(1, limit=2))


def holds_own_tensors(module, state) -> bool:
    """Whether every tensor of `state` (up to SAMPLED_TENSORS of them, a parameter among them)
    is the module's own tensor of that name: same memory, shape and strides."""
    if not hasattr(state, "items"):
        return False
    parameters = dict(module.named_parameters())
    own = dict(parameters)
    own.update(module.named_buffers())
    sampled = 0
    has_parameter = False
    for key, value in state.items():
        current = own.get(key)
        if not isinstance(value, torch.Tensor) or not isinstance(current, torch.Tensor) or value.numel() == 0:
            continue
        if value.is_meta or value.device != current.device or value.data_ptr() != current.data_ptr() \
                or value.shape != current.shape or value.stride() != current.stride():
            return False
        has_parameter = has_parameter or key in parameters
        sampled += 1
        if sampled >= SAMPLED_TENSORS:
            break
    return has_parameter


def own_state_load(module, state, frame, stepped_parameters) -> OwnStateLoaded | None:
    """The event for `module.load_state_dict(state)` called from `frame`, if the dict is the
    module's own state, the module is in no optimizer that stepped and a module of its class
    bound in the frame is."""
    if frame is None or not is_user_frame(frame):
        return None
    if any(p in stepped_parameters for p in module.parameters()):
        return None
    if not holds_own_tensors(module, state):
        return None
    receiver = None
    twins = []
    for name, value in _modules_bound_in(frame):
        if value is module:
            receiver = receiver or name
        elif type(value) is type(module) and any(p in stepped_parameters for p in value.parameters()):
            if not any(value is twin for _, twin in twins):
                twins.append((name, value))
    if not twins:
        return None
    twin = twins[0][0] if len(twins) == 1 else None
    return OwnStateLoaded(type(module).__name__, receiver, twin, capture_user_stack(1, limit=2))


# Lists longer than this are not searched for the loading module.
MAX_LISTED_MODULES = 1024


def listed_own_state_load(module, state, frame) -> OwnStateLoaded | None:
    """The event for `a.load_state_dict(b.state_dict())` called from `frame` where the dict is the
    module's own state, the frame binds the module to two names or more, and a list (or tuple)
    of the frame holds it among other, distinct modules of its class (`clients`, and the global
    model that is `clients[0]`): AD182 reads the program for the function that made the alias."""
    if frame is None or not is_user_frame(frame) or not holds_own_tensors(module, state):
        return None
    names = tuple(name for name, value in _modules_bound_in(frame) if value is module)
    if len(names) < 2:
        return None
    for name, value in frame_locals(frame).items():
        if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= MAX_LISTED_MODULES:
            continue
        if not all(type(item) is type(module) for item in value):
            continue
        positions = [index for index, item in enumerate(value) if item is module]
        if len(positions) == 1 and len({id(item) for item in value}) == len(value):
            return OwnStateLoaded(type(module).__name__, None, None, capture_user_stack(1, limit=2), names,
                                  (name, positions[0]))
    return None


def _modules_bound_in(frame) -> list:
    """(name, module) for the frame's local variables that are modules, and the submodules and
    module attributes of its `self`."""
    found = []
    scope = frame_locals(frame)
    for name, value in scope.items():
        if isinstance(value, torch.nn.Module):
            found.append((name, value))
    owner = scope.get("self")
    if owner is not None:
        attributes = dict(getattr(owner, "_modules", {}) or {})
        try:
            attributes.update({k: v for k, v in vars(owner).items() if isinstance(v, torch.nn.Module)})
        except TypeError:
            pass
        found.extend((f"self.{name}", value) for name, value in attributes.items() if value is not None)
    return found


def _recording_state_dict(original):
    @functools.wraps(original)
    def state_dict(self, *args, **kwargs):
        result = call_as_caller(original, (self, *args), kwargs)
        if not args and kwargs.get("destination") is None and not kwargs.get("prefix"):
            try:  # a top-level call: a submodule's part of it passes its parent's destination
                for recorder in list(_wrapped.recorders):
                    recorder.state_snapshots.remember(self, result)
            except Exception:
                pass
        return result
    return marked(state_dict, original)


@dataclass
class GraphValuesLoaded:
    """`module.load_state_dict(d)` was given tensors that carry a graph (fast weights computed by a
    differentiable update): the load copies their values into the parameters and the graph is left
    behind. Kept weakly: the module, and the names of (at most 4 of) those entries."""

    module: "weakref.ref"
    names: tuple
    count: int
    stack: tuple


# Loads of graph-carrying tensors remembered per recorder (AD101's note on a later restoring load).
GRAPH_LOADS = 8


def _note_graph_values(module, state_dict) -> None:
    if not isinstance(state_dict, dict):
        return
    names = [name for name, value in itertools.islice(state_dict.items(), 4 * SAMPLED_TENSORS)
             if isinstance(value, torch.Tensor) and value.grad_fn is not None]
    if not names:
        return
    loaded = GraphValuesLoaded(weakref.ref(module), tuple(names[:4]), len(names), capture_user_stack(2, limit=2))
    for recorder in list(_wrapped.recorders):
        log = recorder.state.setdefault("graph_value_loads", collections.deque(maxlen=GRAPH_LOADS))
        log.append(loaded)


def graph_value_loads(recorder) -> list[GraphValuesLoaded]:
    """The loads of graph-carrying tensors remembered, the most recent first."""
    return list(reversed(recorder.state.get("graph_value_loads") or ()))


def _recording_load_state_dict(original):
    @functools.wraps(original)
    def load_state_dict(self, state_dict, *args, **kwargs):
        events = []
        own_loads = []
        try:
            _note_graph_values(self, state_dict)
        except Exception:
            pass
        try:  # decided before the load, which may change what the module holds
            caller = sys._getframe(1)
            for recorder in list(_wrapped.recorders):
                event = recorder.state_snapshots.stale_load(self, state_dict)
                if event is not None:
                    events.append((recorder, event))
                own = own_state_load(self, state_dict, caller, recorder.optimizer_clears.stepped_parameters) \
                    or listed_own_state_load(self, state_dict, caller)
                if own is not None:
                    own_loads.append((recorder, own))
        except Exception:
            events, own_loads = [], []
        finally:
            caller = None
        result = call_as_caller(original, (self, state_dict, *args), kwargs)
        for recorder, event in events:
            recorder.listener.stale_snapshot_loaded(event)
        for recorder, event in own_loads:
            recorder.listener.own_state_loaded(event)
        try:  # every load: the analysis looks at what the loaded module's code does next (AD171)
            loaded = ModuleStateLoaded(self, capture_user_stack(1, limit=2))
        except Exception:
            loaded = None
        for recorder in list(_wrapped.recorders) if loaded is not None else ():
            recorder.listener.module_state_loaded(loaded)
        return result
    return marked(load_state_dict, original)


_wrapped = WrappedAttributes(lambda: [(torch.nn.Module, "state_dict", _recording_state_dict),
                                      (torch.nn.Module, "load_state_dict", _recording_load_state_dict)])

# Remember `state_dict()` snapshots and report stale loads of them to a recorder until
# `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
