"""Run one computation plainly and under the doctor, and compare what came out.

The outcome of a run is the exception type it raised (or None), the forward outputs and
the gradients of every input that requires grad; runs under the doctor must match the
plain run exactly (bitwise), and the doctor must report nothing.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

import autograd_doctor


@dataclass
class Outcome:
    error: str | None
    values: list[torch.Tensor] = field(default_factory=list)
    diagnoses: list[str] = field(default_factory=list)


def doctor_settings(every_mode: bool = True) -> dict[str, dict]:
    """The ways to run the doctor: the default, strict (which runs the full, hook-based
    mode), and the full mode without strict where it exists (`every_mode`)."""
    settings = {"watch()": {}, "watch(strict=True)": {"strict": True}}
    if every_mode and "mode" in inspect.signature(autograd_doctor.watch).parameters:
        settings['watch(mode="full")'] = {"mode": "full"}
    return settings


def fresh(value: Any) -> Any:
    """A new leaf with the same values (and requires_grad) for every tensor in `value`."""
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_(value.requires_grad) if copy.is_floating_point() or copy.is_complex() else copy
    if isinstance(value, list):
        return [fresh(v) for v in value]
    if isinstance(value, tuple):
        return tuple(fresh(v) for v in value)
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    return value


def tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


def forward_and_backward(compute: Callable[[], tuple[Any, list[torch.Tensor]]]) -> list[torch.Tensor]:
    """Call `compute` (which returns outputs and the leaves to differentiate), then take the
    gradient of a fixed weighted sum of the outputs; return outputs and gradients."""
    torch.manual_seed(0)
    outputs, leaves = compute()
    results = [t.detach().clone() for t in tensors_in(outputs)]
    differentiable = [t for t in tensors_in(outputs) if t.requires_grad and (t.is_floating_point() or t.is_complex())]
    leaves = [leaf for leaf in leaves if leaf.requires_grad]
    if differentiable and leaves:
        total = sum((t.real if t.is_complex() else t).sum() for t in differentiable)
        grads = torch.autograd.grad(total, leaves, allow_unused=True)
        results += [g.detach().clone() if g is not None else torch.tensor(float("nan")) for g in grads]
    return results


def run(compute: Callable[[], tuple[Any, list[torch.Tensor]]], watch_options: dict | None) -> Outcome:
    """Run plainly (`watch_options` None) or under `watch(**watch_options)`."""
    return run_many([compute], watch_options)[0]


def run_many(computes: list[Callable], watch_options: dict | None) -> list[Outcome]:
    """Run each computation plainly, or all of them in one `watch(**watch_options)` session
    (as in a long program: state the doctor keeps from one op must not disturb the next)."""
    if watch_options is None:
        return [_run_one(compute, None) for compute in computes]
    with autograd_doctor.watch(**watch_options) as doctor:
        return [_run_one(compute, doctor) for compute in computes]


def _run_one(compute: Callable, doctor) -> Outcome:
    reported_before = len(doctor.diagnoses) if doctor is not None else 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            values = forward_and_backward(compute)
        except Exception as error:  # the computation's own failure is part of what we compare
            return Outcome(type(error).__name__)
    diagnoses = [d.code for d in doctor.diagnoses[reported_before:]] if doctor is not None else []
    diagnoses += [str(w.message).strip().splitlines()[0] for w in caught
                  if issubclass(w.category, autograd_doctor.AutogradDoctorWarning)]
    return Outcome(None, values, diagnoses)


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype or a.layout != b.layout:
        return False
    if a.layout != torch.strided:
        a, b = a.to_dense(), b.to_dense()
    if a.is_complex():
        return bitwise_equal(torch.view_as_real(a), torch.view_as_real(b))
    if a.is_floating_point():
        # Same bits: NaN equals NaN, and 0.0 differs from -0.0.
        return torch.equal(a.contiguous().view(_int_of(a.dtype)), b.contiguous().view(_int_of(b.dtype)))
    return torch.equal(a, b)


def _int_of(dtype: torch.dtype) -> torch.dtype:
    return {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.int8}[dtype.itemsize]


def differences(compute: Callable[[], tuple[Any, list[torch.Tensor]]], every_mode: bool = True) -> list[str]:
    """What differs between the plain run and each doctor setting (empty when transparent)."""
    return differences_of_many([compute], every_mode)[0]


def differences_of_many(computes: list[Callable], every_mode: bool = True) -> list[list[str]]:
    """For each computation, what differs between its plain run and each doctor setting."""
    plain = run_many(computes, None)
    problems: list[list[str]] = [[] for _ in computes]
    for label, options in doctor_settings(every_mode).items():
        for found, before, watched in zip(problems, plain, run_many(computes, options)):
            if watched.error != before.error:
                found.append(f"{label}: raised {watched.error}, plain PyTorch {before.error}")
            elif len(watched.values) != len(before.values) or not all(
                    bitwise_equal(a, b) for a, b in zip(watched.values, before.values)):
                found.append(f"{label}: outputs or gradients differ from plain PyTorch")
            if watched.diagnoses:
                found.append(f"{label}: the doctor reported {watched.diagnoses}")
    return problems
