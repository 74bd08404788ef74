"""A commit message in ComfyUI-SelVA (a video-to-audio node pack) describes a
crash, "RuntimeError: Inference tensors cannot be saved for backward": the
CLIP and sync features are loaded on the main thread under
`torch.inference_mode()`, then handed to a worker thread that optimises the
initial noise through the generator conditioned on them (DITTO-style
inference-time optimisation).  The conditioning layers save their input for
backward, and that input is an inference tensor.  Re-created as a feature
loader decorated with `torch.inference_mode()`, a small conditioned
generator, and an optimiser class that runs a few gradient steps on the
initial latent, conditioning by cross-attention over the clip tokens.
Raises at the first forward with gradients.
Buggy line: `attn = torch.softmax(q @ clip_f.transpose(1, 2) / 8 ** 0.5,
dim=-1)` (the matrix product saves `clip_f`, made under inference mode, for
the query's gradient; `attn @ clip_f` on the next line saves it too).
Source: https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/src/commit/357b875e5e92083786a78aaeec948598dbe97c70/nodes"""
import torch
import torch.nn as nn


class FeatureUtils(nn.Module):
    def __init__(self):
        super().__init__()
        self.clip = nn.Linear(12, 8)

    @torch.inference_mode()
    def encode_video(self, frames):
        return self.clip(frames)


class ConditionedGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(16, 8)
        self.out = nn.Linear(8, 16)
        self.net = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 16))

    def forward(self, x, clip_f):
        q = self.query(x).unsqueeze(1)
        attn = torch.softmax(q @ clip_f.transpose(1, 2) / 8 ** 0.5, dim=-1)  # missed: no rule (inference tensor saved for backward)
        cond = self.out((attn @ clip_f).squeeze(1))
        return self.net(x + cond)


class DittoOptimizer:
    def __init__(self, generator, steps=3, lr=0.05):
        self.generator = generator.requires_grad_(False)
        self.steps = steps
        self.lr = lr

    def optimise(self, clip_f, target):
        x0 = torch.randn(clip_f.shape[0], 16, requires_grad=True)
        opt = torch.optim.Adam([x0], lr=self.lr)
        for _ in range(self.steps):
            out = self.generator(x0, clip_f)
            loss = (out - target).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return x0.detach()


def run():
    torch.manual_seed(0)
    features = FeatureUtils()
    clip_f = features.encode_video(torch.randn(2, 5, 12))
    DittoOptimizer(ConditionedGenerator()).optimise(clip_f, torch.randn(2, 16))
