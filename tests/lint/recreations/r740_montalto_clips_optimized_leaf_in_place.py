"""pyolimp (precompensation for optical aberrations), `olimp/precompensation/optimization/
montalto.py` before commit 0e1d3b5 ("remove in place clipping because of grad"): `montalto`
optimises the precompensated image directly -- `precomp = t.clone().detach().requires_grad_(True)`
with an Adam optimizer over `[precomp]` -- and returns `precomp.clip_(0, 1)`.  `precomp` is a leaf
that requires grad, and the in-place clip outside `torch.no_grad()` raises "a leaf Variable that
requires grad is being used in an in-place operation" as soon as the optimisation ends.
Re-created in my own words with the module's structure: the `MontaltoParameters` named tuple, an
FFT convolution helper, the total-variation term, the loss of the paper (or a supplied loss
function), the progress callback and debug record, and the early stop on the loss gap.
Raises at `return precomp.clip_(0, 1)`.
Source: https://github.com/pyolimp/pyolimp/blob/68b112e03c70a9e3d17e5e3911fc8b1914f7497c/olimp/precompensation/optimization/montalto.py"""
from typing import Callable, NamedTuple, TypedDict

import torch
import torch.nn.functional as F
from torch import Tensor


def fft_conv(image: Tensor, psf: Tensor) -> Tensor:
    return torch.real(torch.fft.ifft2(torch.fft.fft2(image) * torch.fft.fft2(psf)))


class DebugInfo(TypedDict):
    loss_step: list
    precomp: Tensor


class MontaltoParameters(NamedTuple):
    lr: float = 1e-2
    theta: float = 1e-6
    tau: float = 2e-5
    Lambda: float = 65.0
    c_high: float = 1.0
    c_low: float = 1 - c_high
    gap: float = 0.01
    loss_func: Callable[[Tensor, Tensor], Tensor] | None = None
    progress: Callable[[float], None] | None = None
    debug: None | DebugInfo = None


def _tv_func(image: Tensor) -> Tensor:
    im_bg = F.pad(input=image, pad=(1, 1, 1, 1))
    x1 = im_bg[..., 1:-1, :-2]
    y1 = im_bg[..., :-2, 1:-1]
    dx = torch.abs(image - x1)
    dy = torch.abs(image - y1)
    return dx + dy


def montalto(image: Tensor, psf: Tensor, parameters: MontaltoParameters = MontaltoParameters()) -> Tensor:
    lr = parameters.lr
    theta = parameters.theta
    tau = parameters.tau
    Lambda = parameters.Lambda
    c_high = parameters.c_high
    c_low = parameters.c_low

    t = image * (c_high - c_low) + c_low

    prev_loss = torch.tensor(float("inf"))
    precomp = t.clone().detach().requires_grad_(True)
    optimizer = torch.optim.Adam([precomp], lr=lr)
    loss_step = []
    if parameters.debug is not None:
        parameters.debug["loss_step"] = loss_step

    for i in range(5000):
        if parameters.progress is not None:
            parameters.progress(i / 5000)
        optimizer.zero_grad()

        if parameters.loss_func is None:
            e = fft_conv(precomp, psf) - t
            func_l1 = torch.sum(_tv_func(precomp))
            func_l2 = torch.linalg.norm(e.flatten())
            func_borders = torch.sum(torch.exp(-Lambda * precomp) + torch.exp(-Lambda * (1 - precomp)))
            loss = func_l2 + (theta * func_l1) + (tau * func_borders)
        else:
            precomp_clip = fft_conv(precomp.clip(0, 1), psf)
            loss = parameters.loss_func(precomp_clip, t)

        loss_step.append(loss.item())
        loss.backward()
        optimizer.step()

        if parameters.debug is not None:
            parameters.debug["precomp"] = precomp

        if torch.abs(prev_loss - loss).item() < parameters.gap:
            break

        prev_loss = loss
    if parameters.progress is not None:
        parameters.progress(1.0)

    return precomp.clip_(0, 1)  # expect: ADL014


def run():
    torch.manual_seed(0)
    image = torch.rand(1, 1, 16, 16)
    psf = torch.zeros(1, 1, 16, 16)
    psf[..., :2, :2] = 0.25
    return montalto(image, psf, MontaltoParameters(gap=1e3))
