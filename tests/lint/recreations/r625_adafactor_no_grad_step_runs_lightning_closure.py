"""transformers 4.30 decorated `Adafactor.step` (and `AdamW.step`) with
`@torch.no_grad()` (#23417).  PyTorch Lightning's automatic optimisation
calls `optimizer.step(closure=closure)` and the closure runs the forward,
the loss and `backward()`; inside the decorated step the closure runs with
gradients off and training fails with "element 0 of tensors does not require
grad and does not have a grad_fn" (reporter: Lightning 2.0.3 with
`transformers.optimization.Adafactor`).  PyTorch's own optimizers run the
closure under `torch.enable_grad()`; the PR removes the decorator.
Re-created as a reduced Adafactor (factored second moments), a
LightningModule-like model and Lightning's closure loop.
Buggy line: `loss = closure()` inside the `@torch.no_grad()` `Adafactor.step`.
Source: https://github.com/huggingface/transformers/pull/24412"""
import torch
import torch.nn as nn


class Adafactor(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, eps=1e-30, decay_rate=-0.8):
        super().__init__(params, dict(lr=lr, eps=eps, decay_rate=decay_rate))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()  # expect: ADL037
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                state["step"] = state.get("step", 0) + 1
                beta2t = 1.0 - state["step"] ** group["decay_rate"]
                update = p.grad ** 2 + group["eps"]
                if p.dim() >= 2:
                    row = state.setdefault("exp_avg_sq_row", torch.zeros(p.shape[0]))
                    col = state.setdefault("exp_avg_sq_col", torch.zeros(p.shape[1]))
                    row.mul_(beta2t).add_(update.mean(dim=-1), alpha=1.0 - beta2t)
                    col.mul_(beta2t).add_(update.mean(dim=-2), alpha=1.0 - beta2t)
                    approx = (row / row.mean()).rsqrt().unsqueeze(-1) * col.rsqrt().unsqueeze(0)
                    p.add_(p.grad * approx, alpha=-group["lr"])
                else:
                    sq = state.setdefault("exp_avg_sq", torch.zeros_like(p))
                    sq.mul_(beta2t).add_(update, alpha=1.0 - beta2t)
                    p.add_(p.grad * sq.rsqrt(), alpha=-group["lr"])
        return loss


class Summarizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.proj = nn.Linear(16, 20)

    def training_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self.proj(torch.tanh(self.embed(tokens)))
        return nn.functional.cross_entropy(logits.view(-1, 20), labels.view(-1))

    def configure_optimizers(self):
        return Adafactor(self.parameters())


def fit(module, batches):
    optimizer = module.configure_optimizers()
    for batch_idx, batch in enumerate(batches):
        def closure():
            loss = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            return loss
        optimizer.step(closure=closure)


def run():
    torch.manual_seed(0)
    batches = [(torch.randint(0, 20, (4, 6)), torch.randint(0, 20, (4, 6))) for _ in range(2)]
    fit(Summarizer(), batches)
