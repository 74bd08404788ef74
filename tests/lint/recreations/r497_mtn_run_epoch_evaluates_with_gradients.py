"""MTN (Multimodal Transformer Networks for video dialogue) trains and
validates through one `run_epoch(data, model, loss_compute, eval=False)`:
for validation it is called with `eval=True` and a `SimpleLossCompute`
without an optimizer, which only turns the loss into a number, but the
forward pass is not wrapped in `torch.no_grad()`, so "your code computes
gradient for validation data. That leads to unnecessary computation"
(the authors updated the code).  Nothing raises.
Buggy line: `out = model.forward(batch)` in `run_epoch` when `eval=True`.
Source: https://github.com/henryhungle/MTN/issues/7"""
import torch
import torch.nn as nn


class Batch:
    def __init__(self, his, trg_y):
        self.his, self.trg_y = his, trg_y
        self.ntokens = trg_y.numel()


class MTN(nn.Module):
    def __init__(self, d_model=8, vocab=5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU())
        self.generator = nn.Linear(d_model, vocab)

    def forward(self, batch):
        return self.encoder(batch.his)


class SimpleLossCompute:
    def __init__(self, generator, criterion, opt=None):
        self.generator, self.criterion, self.opt = generator, criterion, opt

    def __call__(self, x, y, norm):
        logits = self.generator(x)
        loss = self.criterion(logits.view(-1, logits.size(-1)), y.view(-1)) / norm
        if self.opt is not None:
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
        return loss.item() * norm


def run_epoch(data, model, loss_compute, eval=False, record=None):
    total_tokens, total_loss = 0, 0.0
    for his, trg_y in data:
        batch = Batch(his, trg_y)
        out = model.forward(batch)  # expect: ADL031
        loss = loss_compute(out, batch.trg_y, batch.ntokens)
        total_loss += loss
        total_tokens += batch.ntokens
        if eval and record is not None:
            record.append(out)
    return total_loss / total_tokens


def train(model, train_data, valid_data, epochs=1, record=None):
    criterion = nn.CrossEntropyLoss(reduction="sum")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        run_epoch(train_data, model, SimpleLossCompute(model.generator, criterion, opt))
        model.eval()
        valid_loss = run_epoch(valid_data, model, SimpleLossCompute(model.generator, criterion, None),
                               eval=True, record=record)
    return valid_loss


def bug_shows():
    """The validation outputs carry a graph built for a backward that never comes."""
    torch.manual_seed(0)
    data = [(torch.randn(2, 3, 8), torch.randint(0, 5, (2, 3))) for _ in range(2)]
    record = []
    train(MTN(), data, data, record=record)
    return all(out.grad_fn is not None for out in record)
