"""starVLA's trainer accumulates gradients over `gradient_accumulation_steps`
micro-batches, but its training step begins with `optimizer.zero_grad()`:
every micro-batch clears what the earlier ones accumulated, so the step
applies the last micro-batch's gradient only (divided by the accumulation
factor).  Nothing raises; the effective batch is one micro-batch.  The fix
clears right after the step.
Buggy line: `self.optimizer.zero_grad()` in `VLATrainer._train_step`.
Source: https://github.com/starVLA/starVLA/issues/395"""
import torch
import torch.nn as nn


class VLATrainer:
    def __init__(self, model, gradient_accumulation_steps=4, lr=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.completed_steps = 0

    def _train_step(self, batch, step):
        self.optimizer.zero_grad()  # expect: ADL018
        action_loss = nn.functional.mse_loss(self.model(batch["obs"]), batch["action"])
        (action_loss / self.gradient_accumulation_steps).backward()
        if (step + 1) % self.gradient_accumulation_steps == 0:
            self.optimizer.step()
            self.completed_steps += 1
        return action_loss.item()

    def train(self, dataloader):
        self.model.train()
        for step, batch in enumerate(dataloader):
            self._train_step(batch, step)


def bug_shows():
    """The step moves the weights by the last micro-batch's gradient only."""
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    batches = [{"obs": torch.randn(4, 3), "action": torch.randn(4, 2)} for _ in range(4)]
    start = model.weight.detach().clone()
    reference = nn.Linear(3, 2)
    reference.load_state_dict(model.state_dict())
    total = sum(nn.functional.mse_loss(reference(b["obs"]), b["action"]) for b in batches) / 4
    total.backward()
    wanted = start - 0.1 * reference.weight.grad
    VLATrainer(model).train(batches)
    return not torch.allclose(model.weight, wanted)
