"""pdearena's Lightning `PDEModel.training_step` returns, besides the loss
that Lightning backpropagates (and detaches), the extra `scalar_loss` and
`vector_loss` computed from the prediction with their graphs.  Lightning
keeps each step's outputs for the epoch end, so every step's graph up to the
prediction stayed alive: GPU memory grew by about 2 MB per step until it ran
out.  Nothing raises.  The fix returns them detached.  The trainer loop below
stands in for Lightning's: it backpropagates `"loss"`, detaches it, and keeps
the outputs.
Buggy line: the `return` of `training_step`.
ADL028 reports the caller's keeping line (marked), the function's `return` as related.
Source: https://github.com/pdearena/pdearena/pull/4"""
import torch
import torch.nn as nn


class PDEModel(nn.Module):
    def __init__(self, n_scalar=1, n_vector=2, hidden=16):
        super().__init__()
        channels = n_scalar + n_vector
        self.n_scalar = n_scalar
        self.model = nn.Sequential(nn.Conv2d(channels, hidden, 3, padding=1), nn.GELU(),
                                   nn.Conv2d(hidden, channels, 3, padding=1))
        self.train_criterion = nn.MSELoss()

    def training_step(self, batch, batch_idx):
        x, targets = batch
        preds = self.model(x)
        loss = self.train_criterion(preds, targets)
        scalar_loss = self.train_criterion(preds[:, : self.n_scalar], targets[:, : self.n_scalar])
        vector_loss = self.train_criterion(preds[:, self.n_scalar:], targets[:, self.n_scalar:])
        return {"loss": loss, "scalar_loss": scalar_loss, "vector_loss": vector_loss}

    def training_epoch_end(self, outputs):
        return torch.stack([o["scalar_loss"] for o in outputs]).mean()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


def fit(module, batches):
    optimizer = module.configure_optimizers()
    outputs = []
    for batch_idx, batch in enumerate(batches):
        out = module.training_step(batch, batch_idx)
        optimizer.zero_grad()
        out["loss"].backward()
        optimizer.step()
        out["loss"] = out["loss"].detach()
        outputs.append(out)  # expect: ADL028
    module.training_epoch_end(outputs)
    return outputs


def bug_shows():
    """The kept step outputs still hold graphs."""
    torch.manual_seed(0)
    batches = [(torch.randn(2, 3, 6, 6), torch.randn(2, 3, 6, 6)) for _ in range(3)]
    outputs = fit(PDEModel(), batches)
    return all(o["scalar_loss"].grad_fn is not None for o in outputs)
