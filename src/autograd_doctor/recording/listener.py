"""What the recorder reports, and to whom: one listener, one method per typed event.

The recorder (recording/) sees saves, writes and backward calls; the Doctor (doctor.py)
turns what matters into diagnoses. Between them is this protocol: each event is a small
dataclass, delivered to the one `Listener` the recorder was given. Events hold the
objects of the moment (tensors, exceptions) only for the duration of the call.

`NullListener` hears nothing; subclass it to handle only some events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from autograd_doctor.recording.events import BackwardCall, SavedRecord
from autograd_doctor.recording.frames import Site


@dataclass
class StaleSaveRead:
    """Full mode: backward unpacked a saved tensor whose version moved (PyTorch's check)."""

    record: SavedRecord


@dataclass
class SilentSaveRead:
    """Full mode: backward is reading a saved tensor whose memory was written behind
    PyTorch's back (through `.data`), or whose fingerprint may have changed."""

    record: SavedRecord


@dataclass
class UntrackedWriteFound:
    """Default mode, as backward starts: a `.data` write changed memory that a node of this
    graph saved before the write, and PyTorch's version check will not notice."""

    record: SavedRecord
    node: Any
    slot: str


@dataclass
class StaleSaveAhead:
    """Strict mode, before the engine runs: the backward `call` is about to run `node`, which
    saved `record` in `slot`, and a write has since modified it in place (`record.writes`)."""

    record: SavedRecord
    node: Any
    slot: str
    call: BackwardCall


@dataclass
class CallFailed:
    """A wrapped in-place call raised (e.g. a leaf that requires grad written in place)."""

    error: BaseException
    func: Any
    args: tuple
    kwargs: dict
    stack: tuple[Site, ...]
    module_class: str | None = None  # the torch.nn module whose forward made the write (ReLU(inplace=True))


@dataclass
class BackwardStarted:
    call: BackwardCall
    func: Any
    args: tuple
    kwargs: dict


@dataclass
class BackwardDone:
    call: BackwardCall
    func: Any
    args: tuple
    kwargs: dict
    result: Any


@dataclass
class BackwardFailed:
    error: BaseException
    call: BackwardCall
    args: tuple
    kwargs: dict


@dataclass
class LeafCreated:
    """A tensor made with requires_grad=True (or requires_grad_()): where."""

    tensor: Any
    site: Site | None


@dataclass
class OverlappingWrite:
    """An in-place op whose operand reads the memory it writes, in another layout."""

    op: str
    target: Any
    operand: Any
    stack: tuple[Site, ...]


@dataclass
class DetachedAliasWrite:
    """A write into a detach() alias of a tensor whose graph is still live."""

    op: str
    target: Any
    source: Any
    detach_site: Site | None
    stack: tuple[Site, ...]


@dataclass
class StaleViewMade:
    """A line made a view again after its base was overwritten; the old view lives on."""

    old_view: Any
    view_site: Site
    write_stack: tuple[Site, ...]
    new_site: Site


@dataclass
class TensorCopied:
    """torch.tensor(data) on data that carries gradient history (the history is cut)."""

    args: tuple
    kwargs: dict
    stack: tuple[Site, ...]


@dataclass
class ShallowTensorCopy:
    """`copy.copy(t)` called from the user's code on a tensor: the result shares t's memory.
    Only whether t required grad is kept (no tensor is held)."""

    requires_grad: bool
    stack: tuple[Site, ...]


@dataclass
class GraphCutCopy:
    """Inside a module's forward, a value that requires grad was copied into one of the module's
    parameters through `.data` (`param.data.copy_(w)`): autograd does not record the copy.
    The parameter is held weakly; `stack` is the user's line."""

    parameter: Any  # weakref.ref to the nn.Parameter written
    stack: tuple[Site, ...]


@dataclass
class GatherWithoutGraph:
    """`torch.distributed.all_gather(outputs, tensor)` called from the user's code with a tensor
    that has a graph, while gradients are on: the outputs are plain copies. `tensor` is only valid
    during the call to the listener, which must not keep it."""

    tensor: object
    stack: tuple[Site, ...]


@dataclass
class DeepcopyFailed:
    error: BaseException
    obj: Any
    stack: tuple[Site, ...]


@dataclass
class OptimizerStepStarting:
    """An optimizer's step() is about to run (no closure), called from the user's `stack`;
    `swaps` are the parameter and submodule replacements seen so far (parameter_swaps.py)."""

    optimizer: Any
    stack: tuple[Site, ...]
    swaps: list


@dataclass
class OptimizerStepDone:
    """An optimizer's step() (no closure) has just returned."""

    optimizer: Any


@dataclass
class StaleSnapshotLoaded:
    """`load_state_dict(d)` of a snapshot whose tensors are the module's own and were written
    since it was taken: the load changed nothing."""

    module_type: str
    changed: int  # sampled entries written since the snapshot
    sampled: int
    taken: tuple[Site, ...]  # where state_dict() was called
    loaded: tuple[Site, ...]  # where load_state_dict() was called


@dataclass
class OwnStateLoaded:
    """`module.load_state_dict(d)` of a dict whose tensors are that module's own (its
    `state_dict()`): every tensor is copied onto itself. Reported only where the module is in no
    optimizer that stepped and a module of the same class, bound in the caller's frame, is:
    `twin` is that module's name there (None when there are several)."""

    module_type: str
    receiver: str | None  # the loading module's name in the caller's frame
    twin: str | None
    loaded: tuple[Site, ...]  # where load_state_dict() was called
    # For a module loading the state of another of its names, that module being an item of a list
    # of modules of its class in the caller's frame (AD182): the frame's names of the module, and
    # (the list's name, the module's index in it). None for AD169's load.
    names: tuple[str, ...] | None = None
    listed_at: tuple[str, int] | None = None


@dataclass
class ModuleStateLoaded:
    """`module.load_state_dict(...)` returned: the module (held only while the event is handled)
    and where the load was called."""

    module: Any
    loaded: tuple[Site, ...]


class Listener(Protocol):
    """Receives the recorder's events. Methods may raise on purpose (strict mode,
    silent="raise"): the recorder lets those through, at the user's line."""

    def stale_save_read(self, event: StaleSaveRead) -> BaseException | None:
        """Return the exception that backward should raise (None: PyTorch's own words)."""

    def silent_save_read(self, event: SilentSaveRead) -> None: ...

    def untracked_write_found(self, event: UntrackedWriteFound) -> None: ...

    def stale_save_ahead(self, event: StaleSaveAhead) -> None: ...

    def call_failed(self, event: CallFailed) -> None: ...

    def backward_started(self, event: BackwardStarted) -> None: ...

    def backward_done(self, event: BackwardDone) -> None: ...

    def backward_failed(self, event: BackwardFailed) -> None: ...

    def leaf_created(self, event: LeafCreated) -> None: ...

    def overlapping_write(self, event: OverlappingWrite) -> None: ...

    def detached_alias_write(self, event: DetachedAliasWrite) -> None: ...

    def stale_view_made(self, event: StaleViewMade) -> None: ...

    def tensor_copied(self, event: TensorCopied) -> None: ...

    def shallow_tensor_copy(self, event: ShallowTensorCopy) -> None: ...

    def gather_without_graph(self, event: GatherWithoutGraph) -> None: ...

    def deepcopy_failed(self, event: DeepcopyFailed) -> None: ...

    def graph_cut_copy(self, event: GraphCutCopy) -> None: ...

    def optimizer_step_starting(self, event: OptimizerStepStarting) -> None: ...

    def optimizer_step_done(self, event: OptimizerStepDone) -> None: ...

    def stale_snapshot_loaded(self, event: StaleSnapshotLoaded) -> None: ...

    def own_state_loaded(self, event: OwnStateLoaded) -> None: ...

    def module_state_loaded(self, event: ModuleStateLoaded) -> None: ...

    def suspend_saves(self) -> bool:
        """torch.func needs the saved-tensor hooks off: take them off; True if taken."""

    def resume_saves(self) -> None: ...


class NullListener:
    """A listener that hears nothing (a recorder on its own, e.g. in tests)."""

    def stale_save_read(self, event: StaleSaveRead) -> BaseException | None:
        return None

    def silent_save_read(self, event: SilentSaveRead) -> None:
        pass

    def untracked_write_found(self, event: UntrackedWriteFound) -> None:
        pass

    def stale_save_ahead(self, event: StaleSaveAhead) -> None:
        pass

    def call_failed(self, event: CallFailed) -> None:
        pass

    def backward_started(self, event: BackwardStarted) -> None:
        pass

    def backward_done(self, event: BackwardDone) -> None:
        pass

    def backward_failed(self, event: BackwardFailed) -> None:
        pass

    def leaf_created(self, event: LeafCreated) -> None:
        pass

    def overlapping_write(self, event: OverlappingWrite) -> None:
        pass

    def detached_alias_write(self, event: DetachedAliasWrite) -> None:
        pass

    def stale_view_made(self, event: StaleViewMade) -> None:
        pass

    def tensor_copied(self, event: TensorCopied) -> None:
        pass

    def shallow_tensor_copy(self, event: ShallowTensorCopy) -> None:
        pass

    def graph_cut_copy(self, event: GraphCutCopy) -> None:
        pass

    def gather_without_graph(self, event: GatherWithoutGraph) -> None:
        pass

    def deepcopy_failed(self, event: DeepcopyFailed) -> None:
        pass

    def optimizer_step_starting(self, event: OptimizerStepStarting) -> None:
        pass

    def optimizer_step_done(self, event: OptimizerStepDone) -> None:
        pass

    def stale_snapshot_loaded(self, event: StaleSnapshotLoaded) -> None:
        pass

    def own_state_loaded(self, event: OwnStateLoaded) -> None:
        pass

    def module_state_loaded(self, event: ModuleStateLoaded) -> None:
        pass

    def suspend_saves(self) -> bool:
        return False

    def resume_saves(self) -> None:
        pass
