"""Plain records of what happened at run time. None of them holds a tensor strongly,
except `SavedRecord.alias`, which autograd itself owns (it is what `pack` returns)."""

from __future__ import annotations

import weakref
from typing import Any

from autograd_doctor.recording.frames import Site


def byte_range(tensor) -> tuple[int, int]:
    """[start, stop) bytes of the storage that `tensor` can touch."""
    itemsize = tensor.element_size()
    start = tensor.storage_offset() * itemsize
    if tensor.numel() == 0:
        return start, start
    extent = 1
    for size, stride in zip(tensor.size(), tensor.stride()):
        extent += (size - 1) * stride
    return start, start + extent * itemsize


def storage_key(tensor) -> int | None:
    """Identity of the memory behind `tensor`: the storage's base address."""
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:  # sparse, nested and some subclass tensors have no plain storage
        return None


class WriteEvent:
    """An in-place write that touched memory a live saved tensor uses."""

    __slots__ = (
        "op", "stack", "version_before", "version_after", "execution", "loop_values",
        "target_ref", "optimizer", "module_ref", "module_class", "through_alias", "seq",
        "value_is_scalar", "index_is_bool_mask", "changes_saved_elements", "index_kinds",
        "container_kinds", "mask_missing_dims",
    )

    def __init__(self, op: str, stack: tuple[Site, ...], version_before: int, seq: int):
        self.op = op
        self.stack = stack
        self.version_before = version_before
        self.version_after: int | None = None
        self.execution = 1  # how many times this line has written into saved memory so far
        self.loop_values: dict[str, str] = {}
        self.target_ref: weakref.ref | None = None
        self.optimizer: str | None = None  # optimizer class when the write came from step()
        self.module_ref: weakref.ref | None = None  # nn.Module whose forward did the write
        self.module_class: str | None = None
        self.through_alias = False  # True when the written alias does not share the version counter
        self.seq = seq
        self.value_is_scalar: bool | None = None
        self.index_is_bool_mask = False
        self.index_kinds: tuple[str, ...] | None = None  # `t[index] = v`: see calls.index_kinds
        self.mask_missing_dims: int | None = None  # `t[mask] = v`: see calls.mask_missing_dims
        # `c[k][index] = v` into a whole tensor: the Python containers named on the line
        # ({"c": "tuple"}), so a help can copy the entry and put the copy back into `c`.
        self.container_kinds: dict[str, str] = {}
        # Whether the written elements include some of the saved tensor's (its bytes may
        # interleave with the write without sharing an element: a column beside a slice).
        self.changes_saved_elements = True

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None


class SavedRecord:
    """What `pack` returns for each tensor autograd saves.

    `alias` is a detach()ed alias: same storage and version counter, no grad_fn, so
    holding it creates no reference cycle with the node that saved it.

    `pack` runs for every saved tensor, so the constructor sets only what every record
    needs; the rest are class-level defaults, replaced on the rare records that get them
    (hence the instance `__dict__`).
    """

    __slots__ = ("alias", "version", "stack", "seq", "output_nr", "is_output", "node_seq", "__dict__", "__weakref__")

    # Filled in lazily, the first time a write needs to know where this tensor lives.
    key: int | None = None
    start = 0
    stop = 0
    writes: tuple = ()  # WriteEvents that bumped the version (the first is the culprit)
    silent_writes: tuple = ()  # writes through aliases that did not bump it (`.data`)
    reported = False
    fingerprint: Any = None
    # A fingerprint of the values before the first untracked write that landed on them
    # (see fingerprint.content_before_write): a write undone before backward is no corruption.
    content_before_write: Any = None

    def __init__(self, alias, version: int, stack: tuple[Site, ...], seq: int, output_nr: int = 0,
                 is_output: bool = False, node_seq: int = -1):
        self.alias = alias
        self.version = version
        self.stack = stack
        self.seq = seq
        # For PyTorch's own error message (version_message.py): the output number the tensor
        # had when saved, and whether it was an output of the node that saved it.
        self.output_nr = output_nr
        self.is_output = is_output
        # The sequence number of the node that saved it (-1: unknown); see Recorder.pack.
        self.node_seq = node_seq

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None

    def overlaps(self, key: int | None, start: int, stop: int) -> bool:
        if key != self.key:
            return False
        if self.stop == 0:  # the byte range, computed the first time a write lands on this storage
            self.start, self.stop = byte_range(self.alias)
        return start < self.stop and self.start < stop

    def locate(self) -> int | None:
        """Compute the storage key; returns it (None if no storage). The byte range waits
        for a write to this storage: most saved tensors' memory is never written."""
        self.key = storage_key(self.alias)
        return self.key



class SavedRef(weakref.ref):
    """Weak reference to a SavedRecord that remembers its registry key for cleanup."""

    __slots__ = ("key",)


class BackwardCall:
    """A call to backward()/autograd.grad seen by the recorder."""

    __slots__ = ("stack", "retain_graph", "seq", "newest_node")

    def __init__(self, stack: tuple[Site, ...], retain_graph: bool, seq: int, newest_node: int | None = None):
        self.stack = stack
        self.retain_graph = retain_graph
        self.seq = seq
        # The sequence number of the root's grad_fn: nodes numbered at or below it were
        # made before this backward() (see analysis/backward_twice.py).
        self.newest_node = newest_node

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None


class ViewRef(weakref.ref):
    """Weak reference to a view, with where and when (write epoch) it was made."""

    __slots__ = ("key", "site", "epoch", "start", "stop")


class ViewTracking:
    """The live views of one storage, and the writes to it (counted as epochs)."""

    __slots__ = ("epoch", "write_stack", "views")

    def __init__(self):
        self.epoch = 0
        self.write_stack: tuple[Site, ...] = ()
        self.views: dict[int, ViewRef] = {}
