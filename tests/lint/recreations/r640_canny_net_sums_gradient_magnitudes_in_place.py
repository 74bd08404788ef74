"""An issue on CannyEdgePytorch (a Canny edge detector written as a
`nn.Module`): differentiating through the network fails with "one of the
variables needed for gradient computation has been modified by an inplace
operation"; "your Net has many in-place operations which makes it impossible
to calculate the gradients".  Re-created as the detector's first stages:
separable Gaussian blur per colour channel, Sobel filters, and the gradient
magnitude summed over the channels with `+=` into the first channel's
`torch.sqrt(...)`, used as an edge loss on a small generator's output in a
training loop.  Raises at the first backward (sqrt's backward uses its
output, which the sums overwrite).
Buggy lines: `grad_mag += torch.sqrt(grad_x_g ** 2 + grad_y_g ** 2)` and the
same for the blue channel.
Source: https://github.com/DCurro/CannyEdgePytorch/issues/5"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CannyNet(nn.Module):
    def __init__(self, filter_size=5, std=1.0):
        super().__init__()
        g = np.exp(-((np.arange(filter_size) - filter_size // 2) ** 2) / (2 * std ** 2))
        g = torch.tensor(g / g.sum(), dtype=torch.float32)
        self.register_buffer("gauss_h", g.view(1, 1, 1, filter_size))
        self.register_buffer("gauss_v", g.view(1, 1, filter_size, 1))
        sobel = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])
        self.register_buffer("sobel_h", sobel.view(1, 1, 3, 3))
        self.register_buffer("sobel_v", sobel.t().contiguous().view(1, 1, 3, 3))
        self.pad = filter_size // 2

    def blur(self, channel):
        channel = F.conv2d(channel, self.gauss_h, padding=(0, self.pad))
        return F.conv2d(channel, self.gauss_v, padding=(self.pad, 0))

    def forward(self, img):
        blurred_r = self.blur(img[:, 0:1])
        blurred_g = self.blur(img[:, 1:2])
        blurred_b = self.blur(img[:, 2:3])
        grad_x_r = F.conv2d(blurred_r, self.sobel_h, padding=1)
        grad_y_r = F.conv2d(blurred_r, self.sobel_v, padding=1)
        grad_x_g = F.conv2d(blurred_g, self.sobel_h, padding=1)
        grad_y_g = F.conv2d(blurred_g, self.sobel_v, padding=1)
        grad_x_b = F.conv2d(blurred_b, self.sobel_h, padding=1)
        grad_y_b = F.conv2d(blurred_b, self.sobel_v, padding=1)
        grad_mag = torch.sqrt(grad_x_r ** 2 + grad_y_r ** 2 + 1e-6)
        grad_mag += torch.sqrt(grad_x_g ** 2 + grad_y_g ** 2 + 1e-6)  # expect: ADL001
        grad_mag += torch.sqrt(grad_x_b ** 2 + grad_y_b ** 2 + 1e-6)  # expect: ADL001
        return grad_mag


def run():
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Sigmoid())
    canny = CannyNet()
    optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
    for _ in range(2):
        noisy = torch.rand(2, 3, 16, 16)
        clean = torch.rand(2, 3, 16, 16)
        out = generator(noisy)
        edge_loss = F.l1_loss(canny(out), canny(clean))
        loss = F.mse_loss(out, clean) + 0.1 * edge_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
