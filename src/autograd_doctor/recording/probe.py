"""After backward failed with "modified by an inplace operation": which node, which saved
slot, which tensor (the default mode's post-mortem; it has no record of the saves).

The graph is still there when the error reaches the backward() call: the node that
failed has not released its saved tensors. Each node's `_raw_saved_<name>` gives the
SavedTensor without PyTorch's version check and its `.data` the tensor itself (same
memory, same version counter), while reading `_saved_<name>` repeats the check. The
engine runs the ready node with the highest sequence number first, so among the stale
saves that match the error message, the newest node is the one that failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

STALE_MESSAGE = "modified by an inplace operation"
_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+) instead")
_SHAPE = re.compile(r"\[\S+ \[([0-9, ]*)\]\]")

# Nodes visited at most: a post-mortem on a huge graph must still end quickly.
MAX_NODES = 50_000


@dataclass
class StaleSave:
    """A saved tensor whose version moved since autograd saved it."""

    node: Any
    slot: str
    tensor: torch.Tensor
    saved_version: int
    found_version: int


@dataclass(frozen=True)
class ProbedSave:
    """The light mode's account of a saved tensor that was modified: what the analysis gets
    instead of the full mode's SavedRecord. The tensor (a detach()ed alias: same storage
    and version counter), the version autograd saved it at, and the logged writes that
    moved its version, the first being the culprit. Where it was saved is unknown: nothing
    is recorded at save time in the light mode."""

    alias: torch.Tensor
    version: int
    writes: tuple = ()
    site: None = None

    @classmethod
    def of(cls, stale: StaleSave, writes) -> ProbedSave:
        return cls(stale.tensor.detach(), stale.saved_version, tuple(writes))


def is_stale_error(error: BaseException) -> bool:
    return isinstance(error, RuntimeError) and STALE_MESSAGE in str(error)


# A view made by split/chunk/unbind (or iterating a tensor) that autograd saved, whose base was
# written in place afterwards: raised when backward unpacks it.
MULTI_OUTPUT_VIEW_MESSAGE = "is a view and its base or another view of its base has been modified inplace"


def is_multi_output_view_error(error: BaseException) -> bool:
    return isinstance(error, RuntimeError) and MULTI_OUTPUT_VIEW_MESSAGE in str(error)


def find_modified_view_save(roots: list) -> StaleSave | None:
    """The saved piece of a split/chunk/unbind whose base was written, found by walking the
    graph from `roots` and reading each saved slot (which repeats PyTorch's check); the newest
    node first, as the engine runs it first. Its versions are unknown (-1 saved)."""
    best: StaleSave | None = None
    best_number = -1
    for node in graph_nodes(roots):
        for name, slot, tensor in _saved_tensors(node):
            if name == "_raw_saved_tensors":
                continue
            try:
                getattr(node, "_saved_" + name[len("_raw_saved_"):])
                continue
            except RuntimeError as error:
                if MULTI_OUTPUT_VIEW_MESSAGE not in str(error):
                    continue
            except Exception:
                continue
            try:
                number = node._sequence_nr()
            except Exception:
                number = 0
            if number > best_number:
                best, best_number = StaleSave(node, slot, tensor, -1, tensor._version), number
    return best


def roots_of(args: tuple, kwargs: dict) -> list:
    """The root tensors of a backward()/autograd.grad()/autograd.backward() call."""
    roots = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
    if isinstance(roots, torch.Tensor):
        return [roots]
    if isinstance(roots, (list, tuple)):
        return [root for root in roots if isinstance(root, torch.Tensor)]
    return []


def _saved_items(node, name: str):
    """(slot, SavedTensor) for one `_raw_saved_<name>` attribute (a list for cat, stack,
    and ctx.save_for_backward)."""
    try:
        raw = getattr(node, name)
    except Exception:
        return []
    slot = name[len("_raw_"):] if name != "_raw_saved_tensors" else "saved_tensors"
    slot = slot[len("saved_"):] if slot.startswith("saved_") and slot != "saved_tensors" else slot
    if isinstance(raw, (list, tuple)):
        return [(f"{slot}[{index}]", item) for index, item in enumerate(raw)]
    return [(slot, raw)]


def graph_nodes(roots: list):
    """The nodes of the graph under `roots`, each once, at most MAX_NODES of them."""
    seen: set[int] = set()
    queue = [root.grad_fn for root in roots if root.grad_fn is not None]
    while queue and len(seen) < MAX_NODES:
        node = queue.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        try:
            queue.extend(child for child, _ in node.next_functions if child is not None)
        except Exception:
            pass
        yield node


def _saved_tensors(node):
    """(attribute name, slot, tensor) for each tensor `node` saved and still holds (one
    released by a backward, or a saved value that is not a tensor, is skipped)."""
    for name in (name for name in dir(node) if name.startswith("_raw_saved_")):
        for slot, saved in _saved_items(node, name):
            try:
                tensor = saved.data
            except Exception:
                continue
            if isinstance(tensor, torch.Tensor):
                yield name, slot, tensor


def _is_stale_slot(node, name: str) -> bool:
    """Reading `_saved_<name>` repeats PyTorch's version check."""
    try:
        getattr(node, "_saved_" + name[len("_raw_saved_"):])
    except RuntimeError as error:
        return STALE_MESSAGE in str(error)
    except Exception:
        return False
    return False


def find_stale_save(roots: list, message: str) -> StaleSave | None:
    """The saved tensor the error is about, found by walking the graph from `roots`."""
    versions = _VERSIONS.search(message)
    if versions is None:
        return None
    found_version, saved_version = int(versions.group(1)), int(versions.group(2))
    shape_match = _SHAPE.search(message)
    shape = None
    if shape_match is not None:
        text = shape_match.group(1).strip()
        shape = [int(size) for size in text.split(",")] if text else []
    best: StaleSave | None = None
    best_number = -1
    for node in graph_nodes(roots):
        for name, slot, tensor in _saved_tensors(node):
            if tensor._version != found_version:
                continue
            if shape is not None and list(tensor.shape) != shape:
                continue
            if name != "_raw_saved_tensors" and not _is_stale_slot(node, name):
                continue
            try:
                number = node._sequence_nr()
            except Exception:
                number = 0
            if number > best_number:
                best, best_number = StaleSave(node, slot, tensor, saved_version, found_version), number
    return best


@dataclass
class UntrackedHit:
    """A tensor a graph saved whose memory a later `.data` write changed, its version intact."""

    node: Any
    slot: str
    tensor: torch.Tensor
    write: Any  # the LoggedWrite


def saves_changed_by(roots: list, writes: list) -> list[UntrackedHit]:
    """Saved tensors of the graph under `roots` that share elements with what a logged `.data`
    write wrote after the tensor was saved (the saving node is older than the write), while
    their version check still passes and the written values were not put back: backward would
    use the changed values without a word."""
    from autograd_doctor.recording.write_log import storage_base

    targets = [write for write in writes if write.written is not None and write.autograd_seq is not None]
    if not targets:
        return []
    hits: list[UntrackedHit] = []
    for node in graph_nodes(roots):
        try:
            number = node._sequence_nr()
        except Exception:
            continue  # no order: cannot tell whether the save came before the write
        for name, slot, tensor in _saved_tensors(node):
            later = [w for w in targets if number < w.autograd_seq and storage_base(tensor) == w.storage]
            write = _changed_by(tensor, later)
            if write is not None and (name == "_raw_saved_tensors" or not _is_stale_slot(node, name)):
                hits.append(UntrackedHit(node, slot, tensor, write))
    return hits


def _changed_by(saved: torch.Tensor, writes: list):
    """The first of `writes` (on `saved`'s storage, made after the save) that wrote an element of
    `saved` and whose elements do not hold, now, the values they held before the first write to
    them (a value put back, as gradcheck does, changes nothing). None when none did, or when it
    cannot tell (another dtype, memory past the tensor's storage): silence over a false alarm."""
    from autograd_doctor.recording.element_overlap import elements_intersect
    from autograd_doctor.recording.fingerprint import content_before_write

    first_before: dict[tuple, tuple | None] = {}
    for write in sorted(writes, key=lambda w: w.seq):
        first_before.setdefault(write.written, write.content_before)
    for write in sorted(writes, key=lambda w: w.seq):
        offset, size, stride, dtype = write.written
        if dtype != saved.dtype:
            continue
        try:
            with torch.no_grad():
                region = saved.detach().as_strided(size, stride, offset)
            if not elements_intersect(saved, region, unknown=False):
                continue
            before = first_before[write.written]
            if before is not None and content_before_write(region) == before:
                continue  # put back before backward
        except Exception:
            continue
        return write
    return None
