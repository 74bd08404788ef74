"""Mixed-precision fine-tuning through an `Accelerator`-style helper (huggingface/accelerate
before the fix): `prepare()` wraps the optimizer in an `AcceleratedOptimizer` whose `step()` calls
`scaler.step(self.optimizer)` on the inner optimizer, while `accelerator.clip_grad_norm_()` first
unscales the gradients with `scaler.unscale_(...)` on the *wrapper*. The GradScaler records that
unscale under the wrapper's id, so at `step()` it finds the inner optimizer "not unscaled yet" and
divides every gradient by the loss scale a second time. No error: the clipped gradients are
1/scale of what they should be and SGD barely moves. The reporter: "the wrapped optimizer is
unscaled but the inner optimizer is not marked as unscaled ... gradient get unscaled again"; the
maintainer: "That's right" (unscale the inner optimizer).
Source: https://github.com/huggingface/accelerate/issues/113
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AcceleratedOptimizer:
    def __init__(self, optimizer, scaler):
        self.optimizer = optimizer
        self.scaler = scaler

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()


class Accelerator:
    def __init__(self, init_scale=2.0 ** 10):
        self.scaler = torch.amp.GradScaler("cpu", init_scale=init_scale)
        self._optimizers = []

    def prepare(self, model, optimizer):
        optimizer = AcceleratedOptimizer(optimizer, self.scaler)
        self._optimizers.append(optimizer)
        return model, optimizer

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def unscale_gradients(self):
        for optimizer in self._optimizers:
            self.scaler.unscale_(optimizer.optimizer)

    def clip_grad_norm_(self, parameters, max_norm):
        self.unscale_gradients()
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm)


class Classifier(nn.Module):
    def __init__(self, vocab=50, dim=16, classes=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.hidden = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.out(F.gelu(self.hidden(self.embed(tokens))))


def make_batches(n=6, batch=8, length=12):
    batches = []
    for _ in range(n):
        tokens = torch.randint(0, 50, (batch, length))
        batches.append((tokens, (tokens < 10).sum(dim=1).clamp(max=2)))
    return batches


accelerator = Accelerator()
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model, optimizer = accelerator.prepare(model, optimizer)
batches = make_batches()

losses = []
for epoch in range(3):
    for tokens, labels in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(tokens)
        loss = F.cross_entropy(logits.float(), labels)
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in model.parameters()]}
