"""Per-sample gradient clipping (DP-SGD without the noise) as a training callback."""
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class PerSampleClipping:
    def __init__(self, model, max_norm):
        self.model = model
        self.max_norm = max_norm

    def sample_loss(self, params, x, y):
        return F.cross_entropy(functional_call(self.model, params, (x.unsqueeze(0),)), y.unsqueeze(0))  # PRIMARY

    def on_before_step(self, batch):
        x, y = batch
        params = {name: p.detach() for name, p in self.model.named_parameters()}
        per_sample = vmap(grad(self.sample_loss), in_dims=(None, 0, 0))(params, x, y)
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
        factor = (self.max_norm / (norms + 1e-6)).clamp(max=1.0)
        for name, p in self.model.named_parameters():
            clipped = per_sample[name] * factor.view(-1, *[1] * (per_sample[name].dim() - 1))
            p.grad = clipped.mean(0)
