"""StyleTTS2's fine-tuning script trains its SLM adversarial terms with one
`MultiOptimizer` that keeps an optimizer per sub-network and steps one of
them by key.  The SLM adversarial loss returns the WavLM discriminator's loss
`d_loss_slm` and the generator's `loss_gen_lm`, both computed through the
discriminator `wd`.  The script backpropagated the discriminator's loss and
stepped `wd` (`optimizer.step("wd")`) before `loss_gen_lm.backward()`: the
step rewrote `wd`'s weights in place, which the generator loss's graph saved,
and backward fails ("modified by an inplace operation").  The fix runs the
generator's backward and steps before the discriminator's update.
Buggy line: `optimizer.step("wd")` in `train_slm_step`.
Source: https://github.com/yl4579/StyleTTS2/pull/74"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiOptimizer:
    def __init__(self, optimizers):
        self.optimizers = optimizers

    def zero_grad(self, key=None):
        keys = [key] if key is not None else list(self.optimizers)
        for k in keys:
            self.optimizers[k].zero_grad()

    def step(self, key=None):
        keys = [key] if key is not None else list(self.optimizers)
        for k in keys:
            self.optimizers[k].step()


class SLMAdversarialLoss(nn.Module):
    def __init__(self, wd):
        super().__init__()
        self.wd = wd

    def forward(self, real_wav, fake_wav):
        d_real = self.wd(real_wav)
        d_fake = self.wd(fake_wav.detach())
        d_loss = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
        gen_loss = -self.wd(fake_wav).mean()
        return d_loss, gen_loss


def build_models():
    model = nn.ModuleDict({
        "decoder": nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16)),
        "wd": nn.Sequential(nn.Linear(16, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1)),
    })
    optimizer = MultiOptimizer({key: torch.optim.Adam(model[key].parameters(), lr=1e-3) for key in model})
    return model, optimizer


def train_slm_step(model, slmadv, optimizer, style, real_wav):
    fake_wav = model["decoder"](style)
    d_loss_slm, loss_gen_lm = slmadv(real_wav, fake_wav)

    optimizer.zero_grad()
    d_loss_slm.backward(retain_graph=True)
    optimizer.step("wd")  # missed: none

    optimizer.zero_grad()
    loss_gen_lm.backward()
    optimizer.step("decoder")
    return d_loss_slm.item(), loss_gen_lm.item()


def run():
    torch.manual_seed(0)
    model, optimizer = build_models()
    slmadv = SLMAdversarialLoss(model["wd"])
    train_slm_step(model, slmadv, optimizer, torch.randn(4, 8), torch.randn(4, 16))
