"""How two tensors are related: memory, version counter, view, autograd connection.

`relation(a, b)` answers the questions people ask about `detach()`, `clone()`,
`detach().clone()`, `.data` and `copy.deepcopy`: do the two share memory, does a write
to one show in the other, does PyTorch see such a write (shared version counter), and
do gradients flow from one to the other. `describe(t)` gives the same facts for one
tensor.

Nothing here changes a tensor's values. The shared-version-counter test is exact and
uses `torch._C._autograd._unsafe_set_version_counter` to move one tensor's counter and
read the other's, then puts the counter back before returning (no saved tensor can be
checked in between); where that function is missing it falls back to reasoning from
metadata (see `_shares_version_counter`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import torch

from autograd_doctor import compat
from autograd_doctor.recording.events import byte_range, storage_key

# Graph walks stop after this many nodes (a debugging call must not hang on huge graphs).
MAX_GRAPH_NODES = 100_000

_probe_lock = threading.Lock()


def _version(t) -> int | None:
    try:
        return t._version
    except Exception:  # inference tensors and some subclasses have no version counter
        return None


def _shares_version_counter(a, b) -> bool | None:
    """True when a write through one bumps the other's `_version` (None: cannot tell).

    Exact when the private setter exists: different versions cannot share a counter;
    equal versions are probed by setting `a`'s counter to a fresh value, reading `b`'s,
    and restoring `a`'s. Otherwise: views share their base's counter, and a tensor with
    the same storage and bytes that is not a `.data` alias (which gets its own counter,
    starting at 0) is a `detach()`.
    """
    if a is b:
        return True
    va, vb = _version(a), _version(b)
    if va is None or vb is None:
        return None
    if va != vb:
        return False
    setter = compat.lookup("torch._C._autograd._unsafe_set_version_counter")
    if setter is not None:
        with _probe_lock:
            try:
                setter((a,), (va + 1_000_003,))
                try:
                    return _version(b) == va + 1_000_003
                finally:
                    setter((a,), (va,))
            except Exception:
                pass
    base_a = a._base if a._base is not None else a
    base_b = b._base if b._base is not None else b
    if base_a is base_b:
        return True
    return None


def _node_name(node) -> str:
    return type(node).__name__ if node is not None else "None"


def _is_target(node, tensor) -> bool:
    if node is None:
        return False
    if tensor.grad_fn is not None:
        return node is tensor.grad_fn
    return getattr(node, "variable", None) is tensor


def gradient_path(source, target, max_nodes: int = MAX_GRAPH_NODES) -> list[str] | None:
    """Node names on a path from `source.grad_fn` to `target` (its grad_fn, or its
    AccumulateGrad when it is a leaf); None when gradients from `source` never reach it.

        >>> import torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> gradient_path(x.clone() * 2, x)
        ['MulBackward0', 'CloneBackward0', 'AccumulateGrad']
        >>> gradient_path(x.detach() * 2, x) is None
        True
    """
    if source is target:
        return []
    start = getattr(source, "grad_fn", None)
    if start is None or not target.requires_grad:
        return None
    parents: dict[Any, Any] = {start: None}
    queue = [start]
    index = 0
    while index < len(queue) and index < max_nodes:
        node = queue[index]
        index += 1
        if _is_target(node, target):
            path = []
            while node is not None:
                path.append(_node_name(node))
                node = parents[node]
            return list(reversed(path))
        for child, _ in getattr(node, "next_functions", ()) or ():
            if child is not None and child not in parents:
                parents[child] = node
                queue.append(child)
    return None


def _live_recorder():
    try:
        from autograd_doctor.recording import patches

        return patches._current()
    except Exception:
        return None


def _saved_by_live_graph(t) -> list[int] | None:
    """Versions at which a live graph saved memory overlapping `t` (None: no doctor active)."""
    recorder = _live_recorder()
    if recorder is None:
        return None
    try:
        if recorder.pending:
            recorder._register_pending()
        key = storage_key(t)
        start, stop = byte_range(t)
        return [r.version for r in recorder.live_records(key) if r.overlaps(key, start, stop)]
    except Exception:
        return None


@dataclass
class TensorDescription:
    """The autograd-relevant facts about one tensor (see `describe`)."""

    shape: list[int]
    dtype: str
    device: str
    storage: int | None
    byte_range: tuple[int, int] | None
    version: int | None
    is_view: bool
    base_shape: list[int] | None
    is_leaf: bool
    requires_grad: bool
    grad_fn: str | None
    has_grad: bool
    saved_versions: list[int] | None = None  # None: unknown (no doctor active)

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": self.shape, "dtype": self.dtype, "device": self.device,
            "storage": self.storage, "byte_range": list(self.byte_range) if self.byte_range else None,
            "version": self.version, "is_view": self.is_view, "base_shape": self.base_shape,
            "is_leaf": self.is_leaf, "requires_grad": self.requires_grad, "grad_fn": self.grad_fn,
            "has_grad": self.has_grad, "saved_versions": self.saved_versions,
        }

    def __str__(self) -> str:
        parts = [f"{self.dtype}{self.shape} on {self.device}"]
        if self.byte_range is not None:
            parts.append(f"storage 0x{self.storage or 0:x} bytes [{self.byte_range[0]}, {self.byte_range[1]})")
        parts.append(f"version {self.version}")
        if self.is_view:
            parts.append(f"view of a {self.base_shape} tensor")
        if self.grad_fn:
            parts.append(f"non-leaf, grad_fn={self.grad_fn}")
        elif self.requires_grad:
            parts.append("leaf that requires grad" + (" (has .grad)" if self.has_grad else ""))
        else:
            parts.append("no grad history (requires_grad=False)")
        if self.saved_versions:
            parts.append("saved by a live graph at version " + ", ".join(map(str, self.saved_versions)))
        elif self.saved_versions == []:
            parts.append("not saved by a live graph")
        return ", ".join(parts)


def describe(t) -> TensorDescription:
    """Storage, byte range, version, view/base, leaf, requires_grad, grad_fn of `t`.

        >>> import torch
        >>> x = torch.zeros(4, requires_grad=True)
        >>> d = describe(x[1:] * 2)
        >>> d.grad_fn, d.is_leaf, d.byte_range
        ('MulBackward0', False, (0, 12))
        >>> describe(x).requires_grad
        True

    `saved_versions` lists the versions at which a live graph saved this memory; it is
    known only inside `autograd_doctor.watch()` (None outside).
    """
    key = storage_key(t)
    try:
        span = byte_range(t) if key is not None else None
    except Exception:
        span = None
    base = t._base
    return TensorDescription(
        shape=list(t.shape), dtype=str(t.dtype).replace("torch.", ""), device=str(t.device),
        storage=key, byte_range=span, version=_version(t), is_view=base is not None,
        base_shape=list(base.shape) if base is not None else None, is_leaf=t.is_leaf,
        requires_grad=t.requires_grad, grad_fn=_node_name(t.grad_fn) if t.grad_fn is not None else None,
        has_grad=t.is_leaf and t.grad is not None, saved_versions=_saved_by_live_graph(t),
    )


@dataclass
class Relation:
    """What `relation(a, b)` found; `str()` is the one-line verdict plus the facts."""

    kind: str
    verdict: str
    same_object: bool
    shares_storage: bool
    same_bytes: bool
    shared_version_counter: bool | None
    view: str | None
    grad_path_b_to_a: list[str] | None
    grad_path_a_to_b: list[str] | None
    equal_values: bool | None
    a: TensorDescription
    b: TensorDescription
    facts: list[str] = field(default_factory=list)

    @property
    def gradients_flow(self) -> bool:
        """Whether gradients from `b` reach `a` (b was computed from a in the graph)."""
        return self.grad_path_b_to_a is not None

    @property
    def writes_propagate(self) -> bool:
        """Whether an in-place write to `b` changes `a`'s values."""
        return self.shares_storage

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "verdict": self.verdict, "same_object": self.same_object,
            "shares_storage": self.shares_storage, "same_bytes": self.same_bytes,
            "shared_version_counter": self.shared_version_counter, "view": self.view,
            "gradients_flow": self.gradients_flow, "grad_path_b_to_a": self.grad_path_b_to_a,
            "grad_path_a_to_b": self.grad_path_a_to_b, "equal_values": self.equal_values,
            "a": self.a.to_dict(), "b": self.b.to_dict(), "facts": list(self.facts),
        }

    def __str__(self) -> str:
        lines = [self.verdict]
        lines += [f"  - {fact}" for fact in self.facts]
        lines.append(f"  a: {self.a}")
        lines.append(f"  b: {self.b}")
        return "\n".join(lines)


def _equal(a, b) -> bool | None:
    try:
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
            return False
        with torch.no_grad():
            return bool(torch.equal(a, b))
    except Exception:
        return None


def _view_relation(a, b) -> str | None:
    if b._base is not None and b._base is a:
        return "b is a view of a"
    if a._base is not None and a._base is b:
        return "a is a view of b"
    if a._base is not None and a._base is b._base:
        return "a and b are views of the same base"
    if b._base is not None and a._base is not None and b._base is a._base:
        return "a and b are views of the same base"
    if b._base is not None and b._base is a._base:
        return "b is a view of a's base"
    return None


def relation(a, b) -> Relation:
    """How `b` relates to `a`: memory, version counter, view, gradient flow, and a verdict.

        >>> import torch, copy
        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> print(relation(y, y.detach()).verdict)
        b is a detach() of a: same storage, shared version counter, no grad history; writes to b change a (and autograd notices them)
        >>> print(relation(y, y.clone()).verdict)
        b is a clone() of a: new storage, gradients flow from b to a through CloneBackward0
        >>> print(relation(y, y.detach().clone()).verdict)
        b is a detach().clone() of a: independent copy (new storage, no grad history)
        >>> print(relation(x, copy.deepcopy(x)).verdict)
        b is a deepcopy of a (or a detach().clone().requires_grad_()): independent copy, same requires_grad
        >>> print(relation(y, y.data).verdict)
        b is a .data alias of a: same storage, its own version counter, no grad history; writes to b change a and autograd does NOT notice them
    """
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError("relation() compares two tensors")
    da, db = describe(a), describe(b)
    same_object = a is b
    key_a, key_b = da.storage, db.storage
    shares = False
    same_bytes = False
    if key_a is not None and key_a == key_b and da.byte_range and db.byte_range:
        (sa, ea), (sb, eb) = da.byte_range, db.byte_range
        shares = sa < eb and sb < ea or (sa == sb and ea == eb)
        same_bytes = (sa, ea) == (sb, eb) and a.shape == b.shape and a.stride() == b.stride()
    shared_counter = _shares_version_counter(a, b) if shares else False
    view = _view_relation(a, b)
    b_to_a = gradient_path(b, a)
    a_to_b = gradient_path(a, b) if b_to_a is None else None
    equal = _equal(a, b) if not shares else None
    facts: list[str] = []
    kind, verdict = _classify(a, b, same_object, shares, same_bytes, shared_counter, view, b_to_a, a_to_b, equal)
    if shares:
        facts.append("shares memory with a: an in-place write to one changes the other")
        if shared_counter:
            facts.append("shares a's version counter: a write through b bumps a._version, so a saved a fails loudly")
        elif shared_counter is False:
            facts.append("has its own version counter: autograd cannot see writes through b (silently wrong gradients)")
    else:
        facts.append("separate memory: writes to one never change the other")
    if b_to_a is not None:
        facts.append("gradients flow from b to a: " + " -> ".join(b_to_a) if b_to_a else "b is a")
    elif a_to_b is not None:
        facts.append("gradients flow from a to b: " + " -> ".join(a_to_b))
    else:
        facts.append("no autograd connection between a and b")
    return Relation(kind=kind, verdict=verdict, same_object=same_object, shares_storage=shares,
                    same_bytes=same_bytes, shared_version_counter=shared_counter, view=view,
                    grad_path_b_to_a=b_to_a, grad_path_a_to_b=a_to_b, equal_values=equal,
                    a=da, b=db, facts=facts)


def _classify(a, b, same_object, shares, same_bytes, shared_counter, view, b_to_a, a_to_b, equal):
    if same_object:
        return "same", "a and b are the same tensor object"
    if shares:
        if b_to_a is not None and view == "b is a view of a":
            return "view", f"b is a view of a: same storage, shared version counter, gradients flow through {b_to_a[0]}"
        if b_to_a is None and not b.requires_grad and same_bytes:
            if shared_counter:
                return "detach", ("b is a detach() of a: same storage, shared version counter, no grad history; "
                                  "writes to b change a (and autograd notices them)")
            if shared_counter is False:
                return "data", ("b is a .data alias of a: same storage, its own version counter, no grad history; "
                                "writes to b change a and autograd does NOT notice them")
        if view:
            return "view", f"{view}: shared memory" + (
                ", shared version counter" if shared_counter else "")
        counter = {True: "shared version counter", False: "separate version counters",
                   None: "version counter unknown"}[shared_counter]
        return "alias", f"a and b share memory ({counter}); writes to one change the other"
    if b_to_a is not None:
        if b_to_a and b_to_a[0] == "CloneBackward0" and len(b_to_a) == 2:
            return "clone", f"b is a clone() of a: new storage, gradients flow from b to a through {b_to_a[0]}"
        return "derived", "b is computed from a: new storage, gradients flow from b to a through " + " -> ".join(b_to_a)
    if a_to_b is not None:
        return "derived", "a is computed from b: gradients flow from a to b through " + " -> ".join(a_to_b)
    if equal:
        if a.requires_grad and not b.requires_grad:
            return "detach_clone", "b is a detach().clone() of a: independent copy (new storage, no grad history)"
        if a.requires_grad and b.requires_grad and b.is_leaf and a.is_leaf:
            return "deepcopy", ("b is a deepcopy of a (or a detach().clone().requires_grad_()): independent copy, "
                                "same requires_grad")
        return "copy", "b is an independent copy of a: new storage, no autograd connection"
    return "unrelated", "a and b are unrelated: separate storage, no autograd connection"


__all__ = ["relation", "describe", "gradient_path", "Relation", "TensorDescription"]
