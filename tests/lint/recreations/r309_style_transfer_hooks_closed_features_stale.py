"""fast.ai's style-transfer lesson keeps a VGG's intermediate activations with
forward hooks (`SaveFeatures`: `self.features = output`) and compares them
with the targets in each optimisation step.  After the content-loss section
the notebook closes the hooks (`for sf in sfs: sf.close()`); the style
section then optimised a new image while reading `sfs[i].features`, which no
longer change: they hold the activations of the last forward pass that ran
with the hooks on, so the second step's `loss.backward()` goes through that
pass's freed graph ("Trying to backward through the graph a second time").
The fix registers the hooks again (the PR re-initialises `sfs`).
Buggy line: `loss.backward()` in `style_step`, reading the closed hooks'
features.
Expected finding: ADL019 there.
Source: https://github.com/fastai/fastai/pull/761"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SaveFeatures:
    features = None

    def __init__(self, m):
        self.hook = m.register_forward_hook(self.hook_fn)

    def hook_fn(self, module, input, output):
        self.features = output

    def close(self):
        self.hook.remove()


def gram(x):
    b, c, h, w = x.size()
    x = x.view(b * c, -1)
    return torch.mm(x, x.t()) / x.numel() * 1e6


def content_phase(m_vgg, sfs, img, steps=2):
    opt_img = img.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([opt_img], lr=0.5)
    m_vgg(img)
    targ_v = sfs[-1].features.detach().clone()

    def step():
        optimizer.zero_grad()
        m_vgg(opt_img)
        loss = F.mse_loss(sfs[-1].features, targ_v)
        loss.backward()
        return loss

    for _ in range(steps):
        optimizer.step(step)
    for sf in sfs:
        sf.close()


def style_phase(m_vgg, sfs, style_img, steps=2):
    opt_img = torch.rand_like(style_img).requires_grad_(True)
    optimizer = torch.optim.Adam([opt_img], lr=0.05)
    m_vgg(style_img)
    targ_styles = [o.features.detach().clone() for o in sfs]

    def style_step():
        optimizer.zero_grad()
        m_vgg(opt_img)
        outs = [o.features for o in sfs]
        loss = sum(F.mse_loss(gram(o), gram(t)) for o, t in zip(outs, targ_styles))
        loss.backward()  # missed: ADL019
        return loss

    for _ in range(steps):
        optimizer.step(style_step)


def run():
    torch.manual_seed(0)
    m_vgg = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
    for p in m_vgg.parameters():
        p.requires_grad_(False)
    sfs = [SaveFeatures(m_vgg[i]) for i in (1, 3)]
    img = torch.rand(1, 3, 6, 6)
    content_phase(m_vgg, sfs, img)
    style_phase(m_vgg, sfs, torch.rand(1, 3, 6, 6))
