"""The Annotated Transformer's `SimpleLossCompute` computes the loss of a
batch and calls `loss.backward()` unconditionally; only the optimizer step
(and the clearing after it) is skipped when it is built with `opt=None`, as
it is for validation.  Every validation batch therefore adds its gradient to
the model's `.grad`, nothing clears it, and the first training step of the
next epoch applies the training batch's gradient plus the whole validation
set's.  Nothing raises.  The fix backpropagates only when there is an
optimizer (and runs validation under `torch.no_grad()`).
Buggy line: `loss.backward()` in `SimpleLossCompute.__call__`, reached from
the validation `run_epoch`.
Expected finding: ADL018 there.
Source: https://github.com/harvardnlp/annotated-transformer/issues/14"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, d_model, vocab):
        super(Generator, self).__init__()
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, x):
        return F.log_softmax(self.proj(x), dim=-1)


class TinyEncoderDecoder(nn.Module):
    def __init__(self, vocab=6, d_model=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.layer = nn.Linear(d_model, d_model)
        self.generator = Generator(d_model, vocab)

    def forward(self, src):
        return torch.tanh(self.layer(self.embed(src)))


class NoamOpt:
    def __init__(self, model_size, factor, warmup, optimizer):
        self.optimizer = optimizer
        self._step = 0
        self.warmup = warmup
        self.factor = factor
        self.model_size = model_size

    def step(self):
        self._step += 1
        rate = self.rate()
        for p in self.optimizer.param_groups:
            p['lr'] = rate
        self.optimizer.step()

    def rate(self, step=None):
        step = self._step if step is None else step
        return self.factor * (self.model_size ** (-0.5) * min(step ** (-0.5), step * self.warmup ** (-1.5)))


class SimpleLossCompute:
    def __init__(self, generator, criterion, opt=None):
        self.generator = generator
        self.criterion = criterion
        self.opt = opt

    def __call__(self, x, y, norm):
        x = self.generator(x)
        loss = self.criterion(x.contiguous().view(-1, x.size(-1)), y.contiguous().view(-1)) / norm
        loss.backward()  # missed: ADL018
        if self.opt is not None:
            self.opt.step()
            self.opt.optimizer.zero_grad()
        return loss.item() * norm


def run_epoch(data_iter, model, loss_compute):
    total_loss = 0
    for src, tgt in data_iter:
        out = model(src)
        total_loss += loss_compute(out, tgt, tgt.numel())
    return total_loss


def train(model, train_batches, val_batches, epochs=2):
    criterion = nn.NLLLoss(reduction='sum')
    model_opt = NoamOpt(4, 1, 400, torch.optim.SGD(model.parameters(), lr=0))
    for epoch in range(epochs):
        model.train()
        run_epoch(train_batches, model, SimpleLossCompute(model.generator, criterion, model_opt))
        model.eval()
        run_epoch(val_batches, model, SimpleLossCompute(model.generator, criterion, None))


def _data():
    torch.manual_seed(0)
    train_batches = [(torch.randint(0, 6, (2, 3)), torch.randint(0, 6, (2, 3)))]
    val_batches = [(torch.randint(0, 6, (2, 3)), torch.randint(0, 6, (2, 3)))]
    return train_batches, val_batches


def bug_shows():
    """After an epoch the model's `.grad` holds the validation set's gradient,
    which the next training step adds to its own."""
    train_batches, val_batches = _data()
    torch.manual_seed(1)
    model = TinyEncoderDecoder()
    train(model, train_batches, val_batches, epochs=1)
    reference = copy.deepcopy(model)
    reference.zero_grad()
    run_epoch(val_batches, reference, SimpleLossCompute(reference.generator, nn.NLLLoss(reduction='sum'), None))
    return torch.allclose(model.layer.weight.grad, reference.layer.weight.grad) and bool(model.layer.weight.grad.abs().sum() > 0)


def run():
    train_batches, val_batches = _data()
    train(TinyEncoderDecoder(), train_batches, val_batches)
