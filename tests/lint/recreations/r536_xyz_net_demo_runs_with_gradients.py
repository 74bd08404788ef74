"""CIE XYZ Net's demo maps an sRGB image to CIE XYZ and back with a trained
network (a local and a global sub-network per direction).  The issue: "I
have tried your code for a larger image ... The core torch model should be
wrapped in `with torch.no_grad():` to avoid the calculation of gradient when
testing" (the author: "I used it in the evaluation code used during
training, but I forgot it in the demos").  The demo runs the network with
gradients on, so every intermediate activation of the full-resolution image
is kept for a backward that never comes.  Nothing raises; memory grows with
the image size.
Buggy line: `xyz = net.forward_srgb2xyz(image)` (and the call back to sRGB),
run with gradients on.
Source: https://github.com/mahmoudnafifi/CIE_XYZ_NET/issues/2"""
import torch
import torch.nn as nn


def local_net(ch=3, width=8):
    return nn.Sequential(nn.Conv2d(ch, width, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(width, ch, 3, padding=1))


class CIEXYZNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.srgb2xyz_local = local_net()
        self.srgb2xyz_global = nn.Linear(3, 3, bias=False)
        self.xyz2srgb_local = local_net()
        self.xyz2srgb_global = nn.Linear(3, 3, bias=False)

    def forward_srgb2xyz(self, x):
        x = x - self.srgb2xyz_local(x)
        return self.srgb2xyz_global(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    def forward_xyz2srgb(self, x):
        x = self.xyz2srgb_global(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return x + self.xyz2srgb_local(x)


def demo(net, image):
    net.eval()
    xyz = net.forward_srgb2xyz(image)  # missed: ADL031
    srgb = net.forward_xyz2srgb(xyz)  # missed: ADL031
    return xyz, torch.clamp(srgb, 0, 1)


def bug_shows():
    """The demo's outputs carry a graph: gradients were on."""
    torch.manual_seed(0)
    xyz, srgb = demo(CIEXYZNet(), torch.rand(1, 3, 16, 16))
    return xyz.requires_grad and srgb.grad_fn is not None
