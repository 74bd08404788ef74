"""torchaug's batch wrapper applies a list of batch transforms and, with
`inplace=True`, lets each one write into the tensor it is given.
`BatchRandomGrayscale` with probability 1 turns the whole batch to
grayscale with `rgb_to_grayscale(..., num_output_channels=3)`, whose result
is the one-channel luminance `expand`ed to three channels; the next
transform, `Normalize`, then subtracts the mean in place on that expanded
tensor, and fails ("unsupported operation: more than one element of the
written-to tensor refers to a single memory location").  The fix makes the
wrapper call `.contiguous()` (a copy) on an expanded result before handing
it on.
Buggy line: `tensor.sub_(mean).div_(std)` in `normalize`, reached with the
expanded grayscale batch.
Expected finding: ADL012 there.
Source: https://github.com/juliendenize/torchaug/issues/10"""
from typing import Sequence

import torch
from torch import Tensor, nn


def rgb_to_grayscale(imgs: Tensor, num_output_channels: int = 1) -> Tensor:
    r, g, b = imgs.unbind(dim=-3)
    l_img = (0.2989 * r + 0.587 * g + 0.114 * b).unsqueeze(dim=-3)
    if num_output_channels == 3:
        return l_img.expand(imgs.shape)
    return l_img


def normalize(tensor: Tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> Tensor:
    if not inplace:
        tensor = tensor.clone()
    mean_t = torch.as_tensor(mean, dtype=tensor.dtype).view(-1, 1, 1)
    std_t = torch.as_tensor(std, dtype=tensor.dtype).view(-1, 1, 1)
    return tensor.sub_(mean_t).div_(std_t)  # missed: ADL012


class BatchRandomGrayscale(nn.Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        self.p = p
        self.inplace = inplace

    def forward(self, imgs: Tensor) -> Tensor:
        if self.p == 1:
            return rgb_to_grayscale(imgs, num_output_channels=3)
        keep = torch.rand(imgs.shape[0]) >= self.p
        gray = rgb_to_grayscale(imgs, num_output_channels=3)
        return torch.where(keep.view(-1, 1, 1, 1), imgs, gray)


class Normalize(nn.Module):
    def __init__(self, mean, std, inplace: bool = False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor: Tensor) -> Tensor:
        return normalize(tensor, self.mean, self.std, self.inplace)


class BatchImageWrapper(nn.Module):
    def __init__(self, transforms, inplace: bool = True):
        super().__init__()
        self.transforms = nn.ModuleList(transforms)
        self.inplace = inplace
        for transform in self.transforms:
            if hasattr(transform, "inplace"):
                transform.inplace = True

    def forward(self, imgs: Tensor) -> Tensor:
        output = imgs if self.inplace else imgs.clone()
        for transform in self.transforms:
            output = transform(output)
        return output


def run():
    torch.manual_seed(0)
    transform = BatchImageWrapper([BatchRandomGrayscale(1.0), Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
    transform(torch.rand(4, 3, 8, 8))
