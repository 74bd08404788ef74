"""Never hide an error, never change a gradient: every op and module in PyTorch's own test
databases (`op_db` OpInfos, `module_db` ModuleInfos), in-place variants on non-leaf
inputs included, runs plainly and under the doctor with the same exception type, bitwise
equal outputs and gradients, and no report from the doctor.

By default each op and module runs its first sample input under watch() and
watch(strict=True) (strict runs the full, hook-based mode), so the suite stays near a
minute; AUTOGRAD_DOCTOR_ALL_SAMPLES=1 runs every sample PyTorch provides, and the full
mode without strict as well.
"""

from __future__ import annotations

import functools
import os
import warnings
from typing import Callable

import pytest
import torch

from transparency import differences_of_many, fresh, tensors_in

pytest.importorskip("expecttest")
pytest.importorskip("hypothesis")

ALL_SAMPLES = os.environ.get("AUTOGRAD_DOCTOR_ALL_SAMPLES") == "1"
CHUNKS = 8
DTYPE = torch.float64


@functools.lru_cache(maxsize=None)
def autograd_ops() -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return [op for op in op_db if op.supports_autograd and DTYPE in op.supported_dtypes("cpu")]


@functools.lru_cache(maxsize=None)
def modules() -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_modules import module_db
    return [info for info in module_db if DTYPE in info.dtypes]


def _samples(make):
    """The first sample, or all of them; PyTorch's generators are lazy, so only what runs is made."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(make()) if ALL_SAMPLES else list(_first(make()))
    except Exception as error:  # a sample PyTorch cannot build on this machine
        return [], f"no sample: {type(error).__name__}"
    return samples, None


def _first(iterable):
    for item in iterable:
        return [item]
    return []


def _op_computations(op, inplace: bool) -> list[tuple[str, Callable]]:
    """(label, computation) for each sample of `op` (or of its in-place variant)."""
    samples, _skipped = _samples(lambda: op.sample_inputs("cpu", DTYPE, requires_grad=True))
    computations = []
    for index, sample in enumerate(samples):
        def compute(sample=sample):
            inputs = fresh((sample.input, sample.args, sample.kwargs))
            leaves = tensors_in(inputs)
            first, args, kwargs = inputs
            if not inplace:
                return op(first, *args, **kwargs), leaves
            if not isinstance(first, torch.Tensor) or not first.is_floating_point():
                return None, []
            non_leaf = first * 1  # in-place on an intermediate result, as in a model's forward
            return op.inplace_variant(non_leaf, *args, **kwargs), leaves

        computations.append((f"{op.name}{'_' if inplace else ''}[{index}]", compute))
    return computations


def _module_computations(info) -> list[tuple[str, Callable]]:
    samples, _skipped = _samples(lambda: info.module_inputs_func(info, device="cpu", dtype=DTYPE,
                                                                 requires_grad=True, training=True))
    computations = []
    for index, sample in enumerate(samples):
        if sample.forward_input is None:
            continue

        def compute(sample=sample):
            torch.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = info.module_cls(*sample.constructor_input.args, **sample.constructor_input.kwargs)
            module = module.to(DTYPE) if any(p.is_floating_point() for p in module.parameters()) else module
            module.train()
            inputs = fresh((sample.forward_input.args, sample.forward_input.kwargs))
            return module(*inputs[0], **inputs[1]), list(module.parameters()) + tensors_in(inputs)

        computations.append((f"{info.name}[{index}]", compute))
    return computations


def _problems(computations: list[tuple[str, Callable]]) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        found = differences_of_many([compute for _, compute in computations], every_mode=ALL_SAMPLES)
    return [f"{label}: {problem}" for (label, _), problems in zip(computations, found) for problem in problems]


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_ops_run_the_same_under_the_doctor(chunk):
    assert _problems([c for op in autograd_ops()[chunk::CHUNKS] for c in _op_computations(op, False)]) == []


@pytest.mark.parametrize("chunk", range(2))
def test_inplace_variants_on_non_leaf_inputs_run_the_same_under_the_doctor(chunk):
    ops = [op for op in autograd_ops() if op.inplace_variant is not None][chunk::2]
    assert _problems([c for op in ops for c in _op_computations(op, True)]) == []


@pytest.mark.parametrize("chunk", range(2))
def test_modules_run_the_same_under_the_doctor(chunk):
    assert _problems([c for info in modules()[chunk::2] for c in _module_computations(info)]) == []


def test_the_databases_are_covered():
    """The suite runs what it claims: hundreds of ops, a hundred modules, the in-place variants."""
    assert len(autograd_ops()) > 400
    assert len([op for op in autograd_ops() if op.inplace_variant is not None]) > 100
    assert len(modules()) > 80
