"""The default mode's record of writes: a short log of in-place writes, matched after a
failure to the tensor that PyTorch found modified.

The default mode installs no saved-tensor hooks (PyTorch's own version check stays on,
and costs nothing), so when a write happens nobody knows yet whether it matters. Each
user write therefore costs only a few attribute reads and one frame walk: the memory it
hit (the storage's base address), the version counter before and after, and the user's
source position as code objects (no frames, no tensors). When backward later fails with
"modified by an inplace operation", `probe.find_stale_save` finds the saved tensor, and
`writes_into` picks the logged writes that moved its version counter from the saved
version to the one found.
"""

from __future__ import annotations

import collections
import sys
import weakref

from autograd_doctor.recording.events import WriteEvent
from autograd_doctor.recording.frames import (
    Site, _host_file_cache, _internal_file_cache, frame_locals, is_host_file, is_internal_file, torch_module_dir,
)
from autograd_doctor.recording.own_frames import CALLER_FRAME_NAME

# Writes kept; older ones are forgotten (a failure is about the last steps' writes).
LOG_SIZE = 512

_NN_MODULES_DIR = torch_module_dir() + "nn" + "/modules"


class LoggedWrite:
    """One in-place write: where it landed, how it moved the version counter, who made it."""

    __slots__ = ("op", "stack", "storage", "storage_ref", "version_before", "version_after", "target_ref",
                 "module_class", "seq", "optimizer", "loop_values", "value_is_scalar", "index_is_bool_mask",
                 "autograd_seq", "written", "content_before", "index_kinds", "container_kinds",
                 "mask_missing_dims")

    def __init__(self, op: str, stack: tuple[Site, ...], storage: int, version_before: int, seq: int):
        self.op = op
        self.stack = stack
        self.storage = storage
        # The storage itself, weakly: once freed, its address is soon a later tensor's memory,
        # whose version counter starts again where this one's did.
        self.storage_ref = None
        self.version_before = version_before
        self.version_after = version_before
        self.target_ref = None
        self.module_class: str | None = None
        self.optimizer: str | None = None
        self.seq = seq
        self.loop_values: dict[str, str] = {}
        self.value_is_scalar: bool | None = None
        self.index_is_bool_mask = False
        # For writes through `.data`: autograd's next node number when the write ran (nodes
        # numbered below it were made, and their tensors saved, before it).
        self.autograd_seq: int | None = None
        # The elements written (storage offset, sizes, strides, dtype: no tensor kept, the alias
        # dies at once) and a fingerprint of their values just before the write, so that a value
        # put back before backward is not reported.
        self.written: tuple[int, tuple, tuple, object] | None = None  # the last: a torch.dtype
        self.content_before: tuple[int, int] | None = None
        self.index_kinds: tuple[str, ...] | None = None
        self.container_kinds: dict[str, str] = {}
        self.mask_missing_dims: int | None = None  # calls.mask_missing_dims

    def landed_in(self, base: int | None, storage) -> bool:
        """Whether this write went into `storage` (a live storage starting at `base`), not into
        a freed one that was at the same address."""
        return self.storage == base and (self.storage_ref is None or self.storage_ref() is storage)

    def to_event(self) -> WriteEvent:
        event = WriteEvent(self.op, self.stack, self.version_before, self.seq)
        event.version_after = self.version_after
        event.target_ref = self.target_ref
        event.module_class = self.module_class
        event.optimizer = self.optimizer
        event.loop_values = self.loop_values
        event.value_is_scalar = self.value_is_scalar
        event.index_is_bool_mask = self.index_is_bool_mask
        event.index_kinds = self.index_kinds
        event.mask_missing_dims = self.mask_missing_dims
        event.container_kinds = self.container_kinds
        return event


def storage_base(tensor) -> int | None:
    """The address where `tensor`'s storage starts (its memory's identity), cheaply."""
    try:
        return tensor.data_ptr() - tensor.storage_offset() * tensor.element_size()
    except Exception:  # sparse, nested, meta
        return None


def storage_of(tensor):
    """`tensor`'s storage (the same object for all its views while it lives), or None."""
    try:
        return tensor.untyped_storage()
    except Exception:  # sparse, nested, meta
        return None


def _storage_ref(tensor):
    storage = storage_of(tensor)
    try:
        return weakref.ref(storage) if storage is not None else None
    except TypeError:
        return None


def _module_class_of(frame, code) -> str:
    """The name of the torch.nn class whose forward `frame` runs. The forward's qualified name
    is the class that defines it, which is not always the module's: ReLU6 runs
    Hardtanh.forward, and its definition in the user's file says ReLU6. A user's subclass keeps
    the torch class's name (the analyses compare with torch's names)."""
    defining = code.co_qualname.split(".")[0]
    # frame_locals, not frame.f_locals: before Python 3.13 f_locals leaves a snapshot on the frame.
    module = frame_locals(frame).get(code.co_varnames[0]) if code.co_argcount else None
    cls = type(module)
    del module  # no module is kept
    if cls.__name__ != defining and cls.__module__.startswith("torch.nn."):
        return cls.__name__
    return defining


def user_stack_and_module(start_depth: int):
    """(the innermost user frame and its caller as Sites, the nn.Module class whose
    forward made the write (e.g. ReLU(inplace=True)) if the call went through one, the
    innermost user frame itself (to be dropped by the caller, never stored))."""
    frame = sys._getframe(start_depth + 1)
    cache = _internal_file_cache
    hosts = _host_file_cache
    module_class = None
    user_frame = None
    sites: list[Site] = []
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        internal = cache.get(filename)
        if internal is None:
            internal = is_internal_file(filename)
        if not internal and code.co_name != CALLER_FRAME_NAME:
            if user_frame is None:
                user_frame = frame
            sites.append(Site(code, frame.f_lasti))
            if len(sites) == 2:
                break
        elif sites:
            host = hosts.get(filename)  # (read inline: several of torch's frames a write pass here)
            if host is None:
                host = is_host_file(filename)
            if host:
                break  # the test runner or notebook that called the user's code
        elif module_class is None and code.co_name == "forward" and filename.startswith(_NN_MODULES_DIR):
            module_class = _module_class_of(frame, code)
        frame = frame.f_back
    return tuple(sites), module_class, user_frame


# code object -> the (start, end) instruction offsets of its loops
_loops_by_code: dict = {}
_BACKWARD_JUMPS = ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")


def in_loop(code, offset: int) -> bool:
    """Is the instruction at `offset` inside a loop of `code`? A loop ends with a jump
    back to its start; the jumps are found once per code object, in its bytecode (no
    source is read: only writes made in loops pay for reading loop variables)."""
    loops = _loops_by_code.get(code)
    if loops is None:
        loops = []
        try:
            import dis

            for instruction in dis.get_instructions(code):
                target = instruction.argval
                if not isinstance(target, int):
                    continue
                if instruction.opname in _BACKWARD_JUMPS or (
                        instruction.opname == "JUMP_ABSOLUTE" and target < instruction.offset):
                    loops.append((target, instruction.offset))
        except Exception:
            pass
        _loops_by_code[code] = loops
    return any(start <= offset <= end for start, end in loops)


# (code, instruction offset) -> does the user's source line write through `.data`?
_data_write_sites: dict = {}


def writes_through_data(site: Site) -> bool:
    """The user's line writes through `.data` (`h.data.mul_(2)`, `h.data[0] = 0`): such a write
    shares memory with `h` but not its version counter, so PyTorch will not notice it. Read
    once per source position."""
    key = (site.code, site.lasti)
    found = _data_write_sites.get(key)
    if found is None:
        import linecache

        text = linecache.getline(site.filename, site.lineno).split("#")[0]
        found = _data_write_sites[key] = ".data" in text
        if len(_data_write_sites) > 4096:
            _data_write_sites.clear()
    return found


class WriteLog:
    """The last LOG_SIZE writes, newest last."""

    def __init__(self):
        self.entries: collections.deque[LoggedWrite] = collections.deque(maxlen=LOG_SIZE)

    def add(self, entry: LoggedWrite, target) -> None:
        try:
            entry.target_ref = weakref.ref(target)
        except TypeError:
            pass
        entry.storage_ref = _storage_ref(target)
        self.entries.append(entry)

    def writes_into(self, tensor, saved_version: int, found_version: int) -> list[WriteEvent]:
        """The logged writes that took `tensor`'s memory from `saved_version` towards
        `found_version`, oldest first (the first is the culprit)."""
        base = storage_base(tensor)
        if base is None:
            return []
        storage = storage_of(tensor)
        matches: dict[int, LoggedWrite] = {}
        # Newest first: of two logged writes at the same versions, the later one counts.
        for entry in reversed(self.entries):
            if not entry.landed_in(base, storage) or entry.version_before < saved_version:
                continue
            if entry.version_after > found_version or entry.version_before in matches:
                continue
            matches[entry.version_before] = entry
        return [matches[version].to_event() for version in sorted(matches)]

    def newest_write_into(self, tensor) -> WriteEvent | None:
        """The newest logged write into `tensor`'s memory (any part of it), or None."""
        base = storage_base(tensor)
        if base is None:
            return None
        storage = storage_of(tensor)
        for entry in reversed(self.entries):
            if entry.landed_in(base, storage):
                return entry.to_event()
        return None

    def clear(self) -> None:
        self.entries.clear()
