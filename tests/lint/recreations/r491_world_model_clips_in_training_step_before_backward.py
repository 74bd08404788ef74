"""nano-world-model's LightningModule called `clip_grad_norm_` inside
`training_step`, which Lightning runs before `backward()`: at that point the
gradients are `None` (cleared with `set_to_none`) or the previous step's, so
the optimizer's gradient was never capped whatever `gradient_clip_norm` was
set to.  The pull request moves the clip into `configure_gradient_clipping`,
which runs after the backward.  Nothing raises.
Buggy line: `torch.nn.utils.clip_grad_norm_(...)` in `WorldModel.training_step`.
Source: https://github.com/simchowitzlabpublic/nano-world-model/pull/22"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class WorldModel(nn.Module):
    def __init__(self, obs=6, act=2, gradient_clip_norm=0.01):
        super().__init__()
        self.dynamics = nn.Sequential(nn.Linear(obs + act, 16), nn.GELU(), nn.Linear(16, obs))
        self.gradient_clip_norm = gradient_clip_norm
        self.logged = {}

    def training_step(self, batch, batch_idx):
        obs, act, next_obs = batch
        pred = self.dynamics(torch.cat([obs, act], dim=-1))
        loss = F.mse_loss(pred, next_obs)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.parameters(), self.gradient_clip_norm)  # missed: ADL022
        self.logged["gradient_norm"] = float(grad_norm)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


def fit(model, batches, record=None):
    """What Lightning's automatic optimisation does for each batch."""
    optimizer = model.configure_optimizers()
    for batch_idx, batch in enumerate(batches):
        optimizer.zero_grad(set_to_none=True)
        loss = model.training_step(batch, batch_idx)
        loss.backward()
        if record is not None:
            record.append(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]).item())
        optimizer.step()


def bug_shows():
    """The gradient the optimizer applies is far above the clip norm."""
    torch.manual_seed(0)
    model = WorldModel()
    batches = [(torch.randn(8, 6), torch.randn(8, 2), torch.randn(8, 6) * 5) for _ in range(2)]
    record = []
    fit(model, batches, record)
    return all(norm > 10 * model.gradient_clip_norm for norm in record)
