"""The meaning oracle's run: every tensor autograd saved is copied before anything writes into
its memory, so backward uses the values the forward pass used while the writes still happen for
everything after them.

`torch.autograd.graph.allow_mutation_on_saved_tensors()` does the same, but it finds the saved
tensors a write touches by the written tensor's `data_ptr()`. A write through a view that starts
elsewhere in the memory (`t[:, :, j] = v` for j > 0, while the saved tensor starts at `t`'s first
element) is not seen, no copy is made, and backward silently uses the new values: the oracle's
gradients are then wrong. Here a write is matched to the saved tensors by their storage, whatever
view made it.
"""

from __future__ import annotations

import weakref
from collections import defaultdict

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class _SavedHandle:
    """What autograd keeps in place of a saved tensor while the oracle runs (weakly referenced:
    when the graph is freed, its entries go)."""

    __slots__ = ("__weakref__",)


def _storage_key(tensor: torch.Tensor) -> int | None:
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:  # sparse, nested or meta tensors: no storage to match
        return None


class _SavedValues:
    def __init__(self) -> None:
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.copied: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.by_storage: defaultdict[int, weakref.WeakSet] = defaultdict(weakref.WeakSet)

    def pack(self, tensor: torch.Tensor) -> _SavedHandle:
        handle = _SavedHandle()
        self.original[handle] = tensor
        key = _storage_key(tensor)
        if key is not None:
            self.by_storage[key].add(handle)
        return handle

    def unpack(self, handle: _SavedHandle) -> torch.Tensor:
        copy = self.copied.get(handle)
        return copy if copy is not None else self.original[handle]

    def copy_before_write(self, written: torch.Tensor) -> None:
        key = _storage_key(written)
        handles = self.by_storage.get(key) if key is not None else None
        if not handles:
            return
        for handle in list(handles):
            saved = self.original.pop(handle, None)
            if saved is not None:
                self.copied[handle] = saved.clone()
        del self.by_storage[key]  # every saved tensor of this memory now has its own copy


class _CopyBeforeWrite(TorchDispatchMode):
    def __init__(self, saved: _SavedValues) -> None:
        super().__init__()
        self.saved = saved

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for position, argument in enumerate(func._schema.arguments):
            if argument.alias_info is None or not argument.alias_info.is_write:
                continue
            if argument.kwarg_only or position >= len(args):
                value = kwargs.get(argument.name)
            else:
                value = args[position]
            for tensor in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(tensor, torch.Tensor):
                    self.saved.copy_before_write(tensor)
        return func(*args, **kwargs)


class keep_saved_values:
    """Context manager: run the program with each saved tensor copied before it is written."""

    def __enter__(self) -> "keep_saved_values":
        saved = _SavedValues()
        self._hooks = torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack)
        self._mode = _CopyBeforeWrite(saved)
        self._hooks.__enter__()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self._mode.__exit__(*exc_info)
        self._hooks.__exit__(*exc_info)
