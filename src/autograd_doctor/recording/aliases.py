"""Aliases of memory the user may not expect: detach() results, views kept across writes
to their base, NumPy arrays over tensor memory. A mixin of the Recorder: these methods
use its listener and state (`detach_aliases`, `view_storages`, `numpy_aliases`)."""

from __future__ import annotations

import weakref

import torch

from autograd_doctor.recording import copy_sites
from autograd_doctor.recording.calls import carries_grad
from autograd_doctor.recording.events import ViewRef, ViewTracking, byte_range, storage_key
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.frames import called_from_user_code, capture_user_stack
from autograd_doctor.recording.listener import (
    DeepcopyFailed, GatherWithoutGraph, ShallowTensorCopy, StaleViewMade, TensorCopied,
)

# Views tracked per storage; beyond this the storage is not checked for stale views.
MAX_VIEWS_PER_STORAGE = 64


class AliasTracking:
    def call_detach(self, func, args: tuple, kwargs: dict):
        """`t.detach()`: remember alias -> source, to explain writes through the alias."""
        alias = call_as_caller(func, args, kwargs)
        source = args[0] if args else None
        if source is None or source.grad_fn is None or not torch.is_grad_enabled():
            return alias
        try:
            key = id(alias)
            aliases = self.detach_aliases
            stack = capture_user_stack(1, limit=1)

            def forget(_ref, key=key, aliases=aliases):
                aliases.pop(key, None)

            aliases[key] = (weakref.ref(alias, forget), weakref.ref(source), stack[0] if stack else None,
                            next(self.seq))
        except Exception:
            pass
        return alias

    def live_detach_source(self, target):
        """(source, Site of the detach() call) when `target` is, or views, a detach() alias of
        a tensor whose graph is still live; else None."""
        if not torch.is_grad_enabled():
            return None
        for candidate in (target, target._base):
            if candidate is None:
                continue
            entry = self.detach_aliases.get(id(candidate))
            if entry is None or entry[0]() is not candidate:
                continue
            source = entry[1]()
            if source is None:
                return None
            if self.backward_calls and self.backward_calls[-1].seq > entry[3]:
                return None  # the graph has been used since: writing into a spent output is harmless
            if self.graph_spent(source.grad_fn):
                return None  # backward already went through the source's graph (e.g. metrics after a step)
            return source, entry[2]
        return None

    def call_view(self, func, args: tuple, kwargs: dict):
        """A view-making call (`t[1:]`, `t.view(...)`, ...): track the view to catch stale copies."""
        result = call_as_caller(func, args, kwargs)
        if self.write_depth:
            return result
        try:
            self._track_views(result)
        except Exception:
            pass
        return result

    def _track_views(self, result) -> None:
        views = result if isinstance(result, (tuple, list)) else (result,)
        site = None
        for view in views:
            # Views of tensors that require grad are the forward pass's own business (a
            # write to their base is caught by autograd's version check); tracking them
            # would tax every reshape in a model.
            if not isinstance(view, torch.Tensor) or view.requires_grad or view._base is None:
                continue
            key = storage_key(view)
            if key is None:
                continue
            tracking = self.view_storages.get(key)
            if tracking is None:
                tracking = self.view_storages[key] = ViewTracking()
            elif len(tracking.views) >= MAX_VIEWS_PER_STORAGE:
                continue
            if site is None:
                stack = capture_user_stack(1, limit=1)
                if not stack:
                    return
                site = stack[0]
            start, stop = byte_range(view)
            if tracking.epoch:
                # An older view made by this same line, over the same memory, before the
                # latest write to it: if the program kept it, it no longer holds what it held.
                for old_ref in list(tracking.views.values()):
                    if (old_ref.epoch < tracking.epoch and old_ref.site == site
                            and old_ref.start < stop and start < old_ref.stop):
                        old_view = old_ref()
                        if old_view is not None:
                            self.listener.stale_view_made(
                                StaleViewMade(old_view, old_ref.site, tracking.write_stack, site))
                        break
            ref = ViewRef(view, self._drop_view)
            ref.key, ref.site, ref.epoch, ref.start, ref.stop = key, site, tracking.epoch, start, stop
            tracking.views[id(ref)] = ref

    def _drop_view(self, ref: ViewRef) -> None:
        tracking = self.view_storages.get(ref.key)
        if tracking is not None:
            tracking.views.pop(id(ref), None)
            if not tracking.views:
                self.view_storages.pop(ref.key, None)

    def _count_view_storage_write(self, target) -> None:
        tracking = self.view_storages.get(storage_key(target))
        if tracking is not None:
            tracking.epoch += 1
            tracking.write_stack = capture_user_stack(1, limit=2)

    def call_tensor_copy(self, func, args: tuple, kwargs: dict):
        """`torch.tensor(data)`, `torch.as_tensor(data)`: flag data that carries gradient history (it
        is cut here). `as_tensor` of a tensor returns that tensor, graph and all; of a list or tuple
        of tensors it copies their values, as `torch.tensor` does."""
        if kwargs.get("requires_grad") is True:
            return self.call_factory(func, args, kwargs)
        if torch.is_grad_enabled():
            data = args[0] if args else kwargs.get("data")
            copies_values = func.__name__ != "as_tensor" or isinstance(data, (list, tuple))
            if copies_values and carries_grad(data):
                self.listener.tensor_copied(TensorCopied(args, kwargs, capture_user_stack(1, limit=4)))
        return call_as_caller(func, args, kwargs)

    def call_deepcopy(self, func, args: tuple, kwargs: dict):
        try:
            result = call_as_caller(func, args, kwargs)
        except RuntimeError as error:
            if args:
                self.listener.deepcopy_failed(DeepcopyFailed(error, args[0], capture_user_stack(1, limit=3)))
            raise
        if isinstance(result, (torch.Tensor, torch.nn.Module)):
            stack = capture_user_stack(1, limit=1)
            copy_sites.remember_deepcopy(result, stack[0] if stack else None)
        return result

    def call_shallow_copy(self, func, args: tuple, kwargs: dict):
        """`copy.copy(x)`: of a tensor, called from the user's own code, the result shares the
        tensor's memory (a new tensor object over the same storage), which is rarely what a call
        named copy is meant to give. Calls from libraries and the standard library pass unseen."""
        result = call_as_caller(func, args, kwargs)
        source = args[0] if args else None
        if not isinstance(source, torch.Tensor) or not isinstance(result, torch.Tensor):
            return result
        try:
            if called_from_user_code() and result.untyped_storage().data_ptr() == source.untyped_storage().data_ptr():
                self.listener.shallow_tensor_copy(ShallowTensorCopy(source.requires_grad,
                                                                     capture_user_stack(1, limit=2)))
        except Exception:
            pass
        return result

    def call_all_gather(self, func, args: tuple, kwargs: dict):
        """`torch.distributed.all_gather(outputs, tensor)`: the collective copies values, so the
        outputs carry no graph even when `tensor` has one. Seen from the user's code only, while
        gradients are on."""
        result = call_as_caller(func, args, kwargs)
        tensor = args[1] if len(args) > 1 else kwargs.get("tensor")
        try:
            if isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None and torch.is_grad_enabled() \
                    and called_from_user_code():
                self.listener.gather_without_graph(GatherWithoutGraph(tensor, capture_user_stack(1, limit=3)))
        except Exception:
            pass
        return result

    def call_numpy(self, func, args: tuple, kwargs: dict):
        """`t.numpy()` shares memory with t: remember where, for verify_saved reports."""
        result = call_as_caller(func, args, kwargs)
        if self.verify_saved and args and isinstance(args[0], torch.Tensor):
            try:
                key = storage_key(args[0])
                if key is not None:
                    stack = capture_user_stack(1, limit=1)
                    # With the storage (weakly): once it is freed, its address is a later tensor's.
                    self.numpy_aliases[key] = (weakref.ref(args[0].untyped_storage()), stack[0] if stack else None)
                    if len(self.numpy_aliases) > 256:
                        self.numpy_aliases.pop(next(iter(self.numpy_aliases)))
            except Exception:
                pass
        return result

    def graph_spent(self, node, limit: int = 16) -> bool:
        """True when backward has already run through the graph near `node` (its nodes'
        saved tensors were released). No saved tensor nearby -> False (assume live)."""
        previous = self.probing
        self.probing = True  # reads go through our unpack: never raise for a stale slot
        try:
            seen = 0
            queue = [node]
            while queue and seen < limit:
                current = queue.pop(0)
                if current is None:
                    continue
                seen += 1
                for name in dir(current):
                    if not name.startswith("_saved_") or name.endswith(("_sym_sizes", "_sym_strides")):
                        continue
                    try:
                        value = getattr(current, name)
                    except RuntimeError:
                        return True  # "saved tensors ... have already been freed"
                    except Exception:
                        continue
                    if isinstance(value, torch.Tensor):
                        return False
                queue.extend(child for child, _ in getattr(current, "next_functions", ()))
            return False
        finally:
            self.probing = previous
            self.probe_hits.clear()
