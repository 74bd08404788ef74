"""An issue on PyTorch Lightning: `trainer.test(...)` fails with "element 0
of tensors does not require grad and does not have a grad_fn" in a
`test_step` (and a `validation_step`) that computes the loss and calls
backward on it; the maintainers answered that evaluation loops run without
autograd ("working as intended").  Re-created without Lightning as a small
module with `training_step` / `test_step` hooks and a trainer whose `test`
loop runs the hooks under `torch.inference_mode()`, as Lightning does.
Raises at the first test batch.
Buggy line: `results.append(model.test_step(batch))` under
`torch.inference_mode()`: `test_step` runs `loss.backward()` on a loss it
computes, which has no graph there.
Source: https://github.com/Lightning-AI/pytorch-lightning/issues/19910"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 32), nn.ReLU(), nn.Linear(32, 10))

    def training_step(self, batch):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def test_step(self, batch):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        loss.backward()
        grad_norm = sum(p.grad.norm() for p in self.net.parameters() if p.grad is not None)
        return {"test_loss": loss.item(), "grad_norm": float(grad_norm)}


class MiniTrainer:
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs

    def fit(self, model, batches):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(self.max_epochs):
            for batch in batches:
                loss = model.training_step(batch)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

    def test(self, model, batches):
        model.eval()
        results = []
        with torch.inference_mode():
            for batch in batches:
                results.append(model.test_step(batch))  # expect: ADL038
        return results


def run():
    torch.manual_seed(0)
    batches = [(torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))) for _ in range(2)]
    model = LitClassifier()
    trainer = MiniTrainer()
    trainer.fit(model, batches)
    trainer.test(model, batches)
