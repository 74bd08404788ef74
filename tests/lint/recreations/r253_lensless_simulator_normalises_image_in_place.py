"""A lensless-camera simulator (far-field propagation) is used to learn a
mask end to end: `FarFieldSimulator.propagate` convolves the object with
the point spread function, then quantizes like a sensor, normalising with
`image_plane /= image_plane.max()` and scaling with
`image_plane *= self.max_val`.  `max()` (a full reduction) keeps its input
for backward, so dividing that input in place makes the backward of the
reconstruction loss fail ("one of the variables needed for gradient
computation has been modified by an inplace operation").  The fix divides
out of place.
Buggy line: `image_plane /= image_plane.max()` in `FarFieldSimulator.propagate`.
Expected finding: ADL001 there.
Source: https://github.com/ebezzam/waveprop/pull/11"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RealFFTConvolve2D:
    def __init__(self, psf):
        self.psf = psf

    def __call__(self, x):
        pad = [s - 1 for s in self.psf.shape[-2:]]
        fft_shape = [x.shape[-2] + pad[0], x.shape[-1] + pad[1]]
        H = torch.fft.rfft2(self.psf, s=fft_shape)
        X = torch.fft.rfft2(x, s=fft_shape)
        out = torch.fft.irfft2(H * X, s=fft_shape)
        return out[..., pad[0] // 2: pad[0] // 2 + x.shape[-2], pad[1] // 2: pad[1] // 2 + x.shape[-1]]


class FarFieldSimulator:
    def __init__(self, psf, max_val=255, quantize=True):
        self.conv = RealFFTConvolve2D(psf)
        self.max_val = max_val
        self.quantize = quantize

    def propagate(self, obj):
        image_plane = self.conv(obj)
        if self.quantize:
            image_plane /= image_plane.max()  # missed: ADL001
            image_plane *= self.max_val
        return image_plane


class LearnedMask(nn.Module):
    def __init__(self, size=5):
        super().__init__()
        self.logits = nn.Parameter(torch.randn(size, size))

    def psf(self):
        return torch.sigmoid(self.logits)


def train_mask(mask, objects, steps=1):
    optimizer = torch.optim.Adam(mask.parameters(), lr=1e-2)
    decoder = nn.Conv2d(1, 1, 3, padding=1)
    for _ in range(steps):
        simulator = FarFieldSimulator(mask.psf())
        measurement = simulator.propagate(objects) / 255.0
        loss = F.mse_loss(decoder(measurement), objects)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    train_mask(LearnedMask(), torch.rand(2, 1, 8, 8))
