"""What a torch call does, seen from the recorder: does it write, which tensors, with
which operands. Pure functions over the call's arguments; no state."""

from __future__ import annotations

import functools
import os
import sys

import torch

from autograd_doctor import compat
from autograd_doctor.recording.element_overlap import elements_intersect
from autograd_doctor.recording.events import byte_range, storage_key
from autograd_doctor.recording.frames import torch_module_dir

# What a torch-level call does, from the recorder's point of view.
NOT_WRITE, WRITES_FIRST_ARG, WRITES_FOREACH_LIST, BACKWARD, MAKES_VIEW = 0, 1, 2, 3, 4
_TENSOR_GETITEM = torch.Tensor.__getitem__


def index_as_read(index):
    """`index` as PyTorch reads it, for the doctor's own `t[index]` reads: a list holding a slice,
    `...`, None, a tensor or a sequence (fewer than 32 items) is read as a tuple. PyTorch warns
    (a UserWarning, "non-tuple sequence for multidimensional indexing") each time it reads such a
    list; the user's own `t[index]` warns already, and our reading it again must not add one
    (torchphysics' `Points.__setitem__`, docs/real-code.md's twenty-second set)."""
    if isinstance(index, list) and len(index) < 32 and any(
            item is None or item is Ellipsis or isinstance(item, (slice, list, tuple, torch.Tensor)) for item in index):
        return tuple(index)
    return index

# Methods that return views, tracked to catch views kept across writes to their base.
# Not `__getitem__`: assigning it on the Tensor class gives the type a sequence slot that
# stays after the attribute is restored, which breaks `torch.tensor([t1, t2])` for 0-d
# tensors. Views made by indexing are tracked with capture="mode" instead
# (which tracks these methods too: recording/function_mode.py).
VIEW_METHODS = frozenset({
    "view", "view_as", "select", "narrow", "unbind", "split", "chunk", "t",
    "transpose", "permute", "squeeze", "unsqueeze", "flatten", "expand", "diagonal", "unfold",
    "as_strided", "movedim", "reshape",
})


INPLACE_DUNDERS = frozenset({
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
    "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
    "__imatmul__",
})
# Trailing-underscore names that change no tensor data.
UNDERSCORE_NOT_WRITES = frozenset({
    "requires_grad_", "share_memory_", "detach_", "retain_grad_", "rename_", "refine_names_",
})
# The originals, taken before any wrapping: compare a call's `func` against these.
TENSOR_BACKWARD = torch.Tensor.backward
AUTOGRAD_GRAD = torch.autograd.grad
AUTOGRAD_BACKWARD = torch.autograd.backward
BACKWARD_FUNCS = {TENSOR_BACKWARD, AUTOGRAD_GRAD, AUTOGRAD_BACKWARD}



def classify_call(func) -> int:
    if func in BACKWARD_FUNCS:
        return BACKWARD
    name = getattr(func, "__name__", "") or ""
    if name in INPLACE_DUNDERS:
        return WRITES_FIRST_ARG
    if name.endswith("_") and not name.endswith("__") and name not in UNDERSCORE_NOT_WRITES:
        if name.startswith("_foreach_"):
            return WRITES_FOREACH_LIST
        return WRITES_FIRST_ARG
    return NOT_WRITE


def op_name(func, kwargs: dict) -> str:
    name = getattr(func, "__name__", None) or repr(func)
    qualname = getattr(func, "__qualname__", "") or ""
    if qualname.startswith("Tensor.") or qualname.startswith("_TensorBase."):
        name = "Tensor." + name
    module = getattr(func, "__module__", "") or ""
    if module.startswith("torch.nn.functional"):
        name = "F." + name
    if kwargs.get("inplace") is True:
        name += "(inplace=True)"
    if kwargs.get("out") is not None:
        name += "(out=...)"
    return name


def written_tensors(kind: int, args: tuple, kwargs: dict) -> list:
    targets: list = []
    if kind == WRITES_FIRST_ARG or kwargs.get("inplace") is True:
        if args and isinstance(args[0], torch.Tensor):
            targets.append(args[0])
        elif "input" in kwargs and isinstance(kwargs["input"], torch.Tensor):
            targets.append(kwargs["input"])
    elif kind == WRITES_FOREACH_LIST:
        if args and isinstance(args[0], (list, tuple)):
            targets.extend(t for t in args[0] if isinstance(t, torch.Tensor))
    out = kwargs.get("out")
    if isinstance(out, torch.Tensor):
        targets.append(out)
    elif isinstance(out, (list, tuple)):
        targets.extend(t for t in out if isinstance(t, torch.Tensor))
    return targets


_OUR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_TORCH_DIR = torch_module_dir()
# torch files that only forward a user's call (the function-mode machinery, Tensor dunders).
_TORCH_PASS_THROUGH = (_TORCH_DIR + "overrides.py", _TORCH_DIR + "_tensor.py")


def called_by_torch() -> bool:
    """Was the current write made by torch's own Python code rather than by the user?"""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_OUR_DIR) or filename in _TORCH_PASS_THROUGH):
            return filename.startswith(_TORCH_DIR)
        frame = frame.f_back
    return False


def carries_grad(data) -> bool:
    """A tensor that requires grad, or a list/tuple holding one (checked one level deep)."""
    if isinstance(data, torch.Tensor):
        return data.requires_grad
    if isinstance(data, (list, tuple)):
        for item in data[:256]:
            if isinstance(item, torch.Tensor) and item.requires_grad:
                return True
            if isinstance(item, (list, tuple)) and any(
                    isinstance(inner, torch.Tensor) and inner.requires_grad for inner in item[:256]):
                return True
    return False


# In-place ops whose other tensor arguments are indices or masks, not values read
# element by element alongside the write.
_INDEX_ARGUMENT_OPS = ("__setitem__",)


def _dense(tensor) -> bool:
    """Non-overlapping and dense: the elements fill their memory range exactly, in some
    order of the dimensions (a contiguous tensor, its transpose, a permutation)."""
    expected = 1
    for size, stride in sorted(zip(tensor.shape, tensor.stride()), key=lambda pair: pair[1]):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def pytorch_refuses_overlap(target, operand) -> bool:
    """Whether PyTorch's own check (ATen's assert_no_partial_overlap, "some elements of the
    input tensor and the written-to tensor refer to a single memory location") will refuse
    this write: both tensors dense, their memory ranges overlapping, but not as the same
    elements in the same order. Where it cannot tell, PyTorch computes silently."""
    try:
        if target.numel() == 0 or operand.numel() == 0 or not (_dense(target) and _dense(operand)):
            return False
        begin, end = target.data_ptr(), target.data_ptr() + target.numel() * target.element_size()
        operand_begin = operand.data_ptr()
        operand_end = operand_begin + operand.numel() * operand.element_size()
        if (begin, end) == (operand_begin, operand_end):
            return target.stride() != operand.stride()
        return begin < operand_end and operand_begin < end
    except Exception:
        return False


def overlapping_operand(target, op: str, args: tuple, kwargs: dict):
    """A tensor argument that shares memory with `target` in a different layout, if any."""
    key = None
    target_is_view = target._base is not None
    operands = args[2:3] if op.endswith(_INDEX_ARGUMENT_OPS) else args[1:]
    if op.endswith("__setitem__") and len(args) >= 3 and isinstance(args[2], torch.Tensor):
        # `t[index] = value`: what is written is t[index], not all of t. Python turns
        # `a[:, 0] += b` into `a[:, 0] = (a[:, 0] += b)`, a value that *is* the destination.
        try:
            with torch.no_grad():
                destination = _TENSOR_GETITEM(target, index_as_read(args[1]))
        except Exception:
            destination = None
        if destination is not None and destination._base is not None:
            value = args[2]
            if (value.storage_offset() == destination.storage_offset() and value.shape == destination.shape
                    and value.stride() == destination.stride()):
                return None
            target, target_is_view = destination, True
    for operand in (*operands, *kwargs.values()):
        if not isinstance(operand, torch.Tensor) or operand is target:
            continue
        # Two tensors in different layouts over one storage means one of them is a view;
        # this cheap test spares the common case (an optimizer's param.add_(grad)).
        if not target_is_view and operand._base is None:
            continue
        if key is None:
            key = storage_key(target)
            if key is None:
                return None
        if storage_key(operand) != key or read_from_a_copy(op, operand):
            continue
        if (operand.storage_offset() == target.storage_offset() and operand.shape == target.shape
                and operand.stride() == target.stride()):
            continue  # the same elements in the same order: `a.add_(a)` is fine
        start, stop = byte_range(target)
        operand_start, operand_stop = byte_range(operand)
        if start < operand_stop and operand_start < stop and _elements_overlap(target, operand):
            return operand
    return None


# The dispatch keys of a lazily conjugated or negated view (`x.conj()`, `x.adjoint()` of a
# complex x, `torch._neg_view`): the tensor shares memory with x and carries a bit.
_LAZY_BIT_KEYS = (("is_conj", "Conjugate"), ("is_neg", "Negative"))
# In-place operators and the ATen ops they run; `t[i] = v` runs copy_ (a slice) or index_put_.
_DUNDER_ATEN_OPS = {
    "__iadd__": ("add_",), "__isub__": ("sub_",), "__imul__": ("mul_",), "__itruediv__": ("div_",),
    "__ifloordiv__": ("floor_divide_",), "__imod__": ("remainder_",), "__ipow__": ("pow_",),
    "__iand__": ("bitwise_and_",), "__ior__": ("bitwise_or_",), "__ixor__": ("bitwise_xor_",),
    "__ilshift__": ("bitwise_left_shift_",), "__irshift__": ("bitwise_right_shift_",),
    "__setitem__": ("copy_", "index_put_"),
}


def read_from_a_copy(op: str, operand) -> bool:
    """Does PyTorch read this operand from fresh memory rather than from the storage it shares?

    `dx += dx.adjoint()` on a complex dx: the adjoint is a view with the conjugate bit set.
    add_ has no kernel of its own for that bit, so PyTorch's conjugate fallback copies the
    operand, conjugated, into new memory before the kernel runs: the write cannot change a
    value still to be read (for a real dx, whose adjoint is a plain transpose, PyTorch
    refuses the write). Ops that read the bit themselves (copy_, addmm_, ...) read the
    shared memory. When it cannot tell, no: the overlap stays reported."""
    bits = [key for test, key in _LAZY_BIT_KEYS if getattr(operand, test)()]
    return any(not _reads_the_bit_itself(op, key) for key in bits)


@functools.lru_cache(maxsize=None)
def _reads_the_bit_itself(op: str, key: str) -> bool:
    """Has any ATen op behind this call (any overload) a kernel for the Conjugate or
    Negative dispatch key? Such a kernel (a fallthrough included) takes the view as it is."""
    has_kernel = compat.lookup("torch._C._dispatch_has_kernel_for_dispatch_key")
    name = op.rsplit(".", 1)[-1]
    aten_names = _DUNDER_ATEN_OPS.get(name, (name,))
    if has_kernel is None or name == "__imatmul__":
        return True
    for aten_name in aten_names:
        try:
            overloads = getattr(torch.ops.aten, aten_name).overloads()
        except Exception:
            return True  # an op this torch does not have under that name: cannot tell
        for overload in overloads:
            qualified = f"aten::{aten_name}" if overload == "default" else f"aten::{aten_name}.{overload}"
            try:
                if has_kernel(qualified, key):
                    return True
            except Exception:
                continue  # an overload outside the dispatcher (`add_.t`, for lists)
    return False


def _elements_overlap(target, operand) -> bool:
    """Do the two tensors share at least one element (byte ranges can interleave without
    sharing any, e.g. the columns `x[:, 0]` and `x[:, 1]`)? When it cannot tell, no: a
    false alarm costs more than a miss."""
    return elements_intersect(target, operand, unknown=False)


def written_region(target, op: str, args: tuple):
    """The elements a write changes: `t[index] = v` changes the view t[index] (basic
    indexing), every other write (and advanced indexing, whose positions no view holds)
    the whole target."""
    if not op.endswith("__setitem__") or len(args) < 2 or args[0] is not target:
        return target
    try:
        with torch.no_grad():
            region = _TENSOR_GETITEM(target, index_as_read(args[1]))
        if region._is_view() and storage_key(region) == storage_key(target):
            return region
    except Exception:
        pass
    return target


def describe_write_arguments(hits, op: str, args: tuple) -> None:
    """For `t[index] = value`: is the value a plain number, is the index a boolean mask?"""
    if not op.endswith("__setitem__") or len(args) < 3:
        return
    value_is_scalar, index_is_mask = setitem_facts(args[1], args[2])
    kinds = index_kinds(args[1])
    for _record, event, target in hits:
        event.value_is_scalar = value_is_scalar
        event.index_is_bool_mask = index_is_mask
        event.mask_missing_dims = mask_missing_dims(target, args[1])
        event.index_kinds = kinds


def index_kinds(index) -> tuple[str, ...]:
    """What each part of `t[index]` was at run time: "int", "slice", "ellipsis", "none" or
    "other" (a tensor, a list), one per element of a tuple index. A help that rewrites the
    write with select_scatter or slice_scatter needs to know: `t[index]` may hold a tuple."""
    parts = index if isinstance(index, tuple) else (index,)
    kinds = []
    for part in parts:
        if isinstance(part, bool):
            kinds.append("other")
        elif isinstance(part, int) or type(part).__name__ in ("SymInt",) or _is_numpy_integer(part):
            kinds.append("int")
        elif isinstance(part, slice):
            kinds.append("slice")
        elif part is Ellipsis:
            kinds.append("ellipsis")
        elif part is None:
            kinds.append("none")
        else:
            kinds.append("other")
    return tuple(kinds)


def _is_numpy_integer(value) -> bool:
    module = type(value).__module__
    return module == "numpy" and hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu" \
        and getattr(value, "ndim", 1) == 0


def setitem_facts(index, value) -> tuple[bool, bool]:
    """(the value is a plain number, the index is a boolean mask) for `t[index] = value`."""
    value_is_scalar = isinstance(value, (int, float, bool)) or (
        isinstance(value, torch.Tensor) and value.dim() == 0 and not value.requires_grad)
    return value_is_scalar, isinstance(index, torch.Tensor) and index.dtype == torch.bool


def mask_missing_dims(target, index) -> int | None:
    """`t[mask] = v` with one boolean mask of fewer dimensions than `t`: how many trailing
    dimensions of `t` the mask does not have (it selects along the leading ones; torch.where
    broadcasts from the trailing ones, so a rewrite must add them to the mask). None when the
    index is not one boolean mask whose shape is `t`'s leading shape."""
    if not (isinstance(index, torch.Tensor) and index.dtype == torch.bool and isinstance(target, torch.Tensor)):
        return None
    missing = target.dim() - index.dim()
    if missing < 0 or tuple(target.shape[:index.dim()]) != tuple(index.shape):
        return None
    return missing
