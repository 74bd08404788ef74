"""Generative Adversarial Perturbations: the generator's output (a `Tanh`
image) is mapped to an image-space perturbation by `normalize_and_scale`,
which shifts, scales, normalises and clips the L-inf norm of each channel
entirely through `.data` (`delta_im.data += 1`, `delta_im.data *= 0.5`,
`delta_im[i, ci, :, :].data *= ...`).  Autograd sees none of it: the
gradient that reaches the generator is that of the raw `Tanh` output (no
0.5, no 1/std, no L-inf factor), and `Tanh`'s backward uses its saved output,
which the writes changed, so `1 - y**2` is computed from the scaled values.
Nothing raises; the generator trains on a wrong gradient.  The fix does the
same arithmetic out of place (with the L-inf factor computed from a
detached copy).
Buggy line: `delta_im.data += 1` in `normalize_and_scale` (and the other
`.data` writes after it).
Expected finding: ADL004 there (opt-in).
Source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4"""
import numpy as np
import torch
import torch.nn as nn

mean_arr = [0.485, 0.456, 0.406]
stddev_arr = [0.229, 0.224, 0.225]
mag_in = 10.0


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=4):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, ngf, 3, padding=1), nn.ReLU(True), nn.Conv2d(ngf, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.model(x)


def normalize_and_scale(delta_im, batch_size):
    delta_im.data += 1  # missed: ADL004
    delta_im.data *= 0.5
    for c in range(3):
        delta_im.data[:, c, :, :] = (delta_im.data[:, c, :, :] - mean_arr[c]) / stddev_arr[c]
    for i in range(batch_size):
        for ci in range(3):
            l_inf_channel = delta_im[i, ci, :, :].data.abs().max()
            mag_in_scaled_c = mag_in / (255.0 * stddev_arr[ci])
            delta_im[i, ci, :, :].data *= np.minimum(1.0, mag_in_scaled_c / l_inf_channel.item())
    return delta_im


def normalize_and_scale_out_of_place(delta_im, batch_size):
    delta_im = (delta_im + 1) * 0.5
    mean = torch.tensor(mean_arr).view(1, 3, 1, 1)
    std = torch.tensor(stddev_arr).view(1, 3, 1, 1)
    delta_im = (delta_im - mean) / std
    l_inf = delta_im.detach().abs().amax(dim=(2, 3), keepdim=True)
    mag = torch.tensor([mag_in / (255.0 * s) for s in stddev_arr]).view(1, 3, 1, 1)
    return delta_im * torch.clamp(mag / l_inf, max=1.0)


def train_step(netG, pretrained_clf, optimizerG, image, target_label, scale=normalize_and_scale):
    criterion_pre = nn.CrossEntropyLoss()
    delta_im = netG(image)
    delta_im = scale(delta_im, image.size(0))
    netG.zero_grad()
    recons = torch.add(image, delta_im)
    output_pretrained = pretrained_clf(recons)
    loss = torch.log(criterion_pre(output_pretrained, target_label))
    loss.backward()
    optimizerG.step()
    return loss


def _setup():
    torch.manual_seed(0)
    netG = ResnetGenerator()
    clf = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 5))
    for p in clf.parameters():
        p.requires_grad_(False)
    return netG, clf, torch.randn(2, 3, 4, 4), torch.tensor([1, 3])


def bug_shows():
    """The generator's gradient is not the gradient of what it computed."""
    netG, clf, image, target = _setup()
    train_step(netG, clf, torch.optim.SGD(netG.parameters(), lr=0.0), image, target)
    buggy_grad = netG.model[0].weight.grad.clone()
    train_step(netG, clf, torch.optim.SGD(netG.parameters(), lr=0.0), image, target, normalize_and_scale_out_of_place)
    return not torch.allclose(buggy_grad, netG.model[0].weight.grad)


def run():
    netG, clf, image, target = _setup()
    train_step(netG, clf, torch.optim.Adam(netG.parameters(), lr=2e-4), image, target)
