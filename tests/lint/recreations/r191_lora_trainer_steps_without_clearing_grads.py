"""A `Trainer` class for LoRA fine-tuning computes the loss of each batch in
`train_step`, backpropagates it and steps the optimizer, but never clears
the gradients: every step applies the sum of all the gradients seen so far.
Nothing raises; the fix sets the trainer's zero-grad flag so that
`optimizer.zero_grad()` runs after each `optimizer.step()`.
Buggy line: the loop in `Trainer.fit` (no `zero_grad()` anywhere).
Expected finding: ADL018 at the step of `train_step`, which the loop runs (found since stop 47;
the mark was on the loop).
Source: https://github.com/tenstorrent/tt-blacksmith/pull/711"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Module):
    def __init__(self, in_features, out_features, rank=2, alpha=4.0):
        super().__init__()
        self.base = nn.Linear(in_features, out_features)
        self.base.requires_grad_(False)
        self.lora_a = nn.Parameter(torch.randn(rank, in_features) * 0.1)
        self.lora_b = nn.Parameter(torch.randn(out_features, rank) * 0.1)
        self.scaling = alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.lora_a.t() @ self.lora_b.t()) * self.scaling


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)

    def train_step(self, batch):
        inputs, targets = batch
        loss = F.mse_loss(self.model(inputs), targets)
        loss.backward()
        self.optimizer.step()  # expect: ADL018
        return loss.detach()

    def fit(self, batches):
        losses = []
        for batch in batches:
            losses.append(self.train_step(batch))
        return losses


def _batches():
    torch.manual_seed(1)
    return [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)]


def bug_shows():
    """The second step applies the first batch's gradient again."""
    torch.manual_seed(0)
    model = LoRALinear(3, 2)
    trainer = Trainer(model)
    batches = _batches()
    trainer.fit(batches[:1])
    grad_after_first = model.lora_a.grad.clone()
    trainer.fit(batches[1:])
    model_ref = LoRALinear(3, 2)
    model_ref.load_state_dict(model.state_dict())
    model_ref.zero_grad()
    inputs, targets = batches[1]
    # the gradient of the second batch alone, at the parameters the second step used
    with torch.no_grad():
        model_ref.lora_a.add_(0.01 * model.lora_a.grad)
        model_ref.lora_b.add_(0.01 * model.lora_b.grad)
    F.mse_loss(model_ref(inputs), targets).backward()
    return torch.allclose(model.lora_a.grad, model_ref.lora_a.grad + grad_after_first)
