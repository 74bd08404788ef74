"""kogito (commonsense knowledge inference with COMET-BART): the trainer is a
PyTorch Lightning module whose `configure_optimizers` returns
`transformers.AdamW`.  That optimizer's `step` is decorated with
`@torch.no_grad()` and runs Lightning's closure (forward, loss, backward)
inside it, so fine-tuning fails at the first step with "element 0 of
tensors does not require grad and does not have a grad_fn" (the traceback
goes through Lightning's `optimizer_step` into transformers' optimizer).
Torch's own AdamW runs the closure under `torch.enable_grad()`.  Re-created
as a seq2seq-like LightningModule, the decorated AdamW and Lightning's loop.
Buggy line: `loss = closure()` inside the `@torch.no_grad()` `AdamW.step`.
Source: https://github.com/epfl-nlp/kogito/issues/2"""
import math

import torch
import torch.nn as nn


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

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
                if not state:
                    state["step"], state["exp_avg"], state["exp_avg_sq"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                beta1, beta2 = group["betas"]
                state["step"] += 1
                state["exp_avg"].mul_(beta1).add_(p.grad, alpha=1.0 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                step_size = group["lr"] * math.sqrt(1.0 - beta2 ** state["step"]) / (1.0 - beta1 ** state["step"])
                p.addcdiv_(state["exp_avg"], state["exp_avg_sq"].sqrt().add_(group["eps"]), value=-step_size)
        return loss


class COMETModule(nn.Module):
    def __init__(self, vocab=30, dim=16):
        super().__init__()
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def training_step(self, batch, batch_idx):
        source, target = batch
        hidden, _ = self.encoder(self.embed(source))
        logits = self.lm_head(hidden)
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))

    def configure_optimizers(self):
        return AdamW(self.parameters(), lr=3e-4)


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
    batches = [(torch.randint(0, 30, (2, 5)), torch.randint(0, 30, (2, 5))) for _ in range(2)]
    fit(COMETModule(), batches)
