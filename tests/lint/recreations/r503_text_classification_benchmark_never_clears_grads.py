"""TextClassificationBenchmark's `main.py` trains every model with the same
loop: forward, cross-entropy, `loss.backward()`, clip the gradients with
`utils.clip_gradient(optimizer, opt.grad_clip)`, `optimizer.step()`, with no
`optimizer.zero_grad()` (nor `model.zero_grad()`) anywhere in it: "why do not
use optimizer.zero_grad in each training step?".  Every step applies the sum
of all gradients since the start.  Nothing raises.
Buggy line: `optimizer.step()` in the training loop, never cleared.
Source: https://github.com/FreedomIntelligence/TextClassificationBenchmark/issues/20"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def clip_gradient(optimizer, grad_clip):
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None and param.requires_grad:
                param.grad.data.clamp_(-grad_clip, grad_clip)


class LSTMClassifier(nn.Module):
    def __init__(self, vocab=20, emb=8, hidden=8, labels=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.hidden2label = nn.Linear(hidden, labels)

    def forward(self, text):
        out, _ = self.lstm(self.embedding(text))
        return self.hidden2label(out[:, -1])


def train(opt, model, train_iter, record=None):
    optimizer = torch.optim.Adam(model.parameters(), lr=opt["learning_rate"])
    model.train()
    for epoch in range(opt["max_epoch"]):
        for i, (text, label) in enumerate(train_iter):
            predicted = model(text)
            loss = F.cross_entropy(predicted, label)
            if record is not None and model.hidden2label.weight.grad is not None:
                record.append(model.hidden2label.weight.grad.clone())
            loss.backward()
            clip_gradient(optimizer, opt["grad_clip"])
            optimizer.step()  # expect: ADL018
    return model


def bug_shows():
    """The second batch starts from the first batch's gradient instead of from zero."""
    torch.manual_seed(0)
    batches = [(torch.randint(0, 20, (4, 5)), torch.randint(0, 3, (4,))) for _ in range(2)]
    record = []
    train({"learning_rate": 1e-3, "max_epoch": 1, "grad_clip": 10.0}, LSTMClassifier(), batches, record)
    return len(record) == 1 and record[0].abs().sum().item() > 0
