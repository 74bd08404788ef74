"""A review comment on a pull request that adds book-derived skills
("LLMs from scratch", chapter 5, pretraining): the skill's training loop
calls `loss.backward(); optimizer.step()` for each batch without clearing the
gradients, "so every batch after the first applies both the current gradient
and stale gradients from earlier batches, producing incorrect training
updates.  Call optimizer.zero_grad() before each backward pass."  Re-created
here as the chapter's shape: a tiny GPT-like model, `calc_loss_batch`,
`evaluate_model` and `train_model_simple` with its token counter and
periodic evaluation.  Nothing raises.
Buggy line: `optimizer.step()` (no `zero_grad()` in the loop).
Source: https://github.com/affaan-m/ECC/pull/3122"""
import torch
import torch.nn as nn


class TinyGPT(nn.Module):
    def __init__(self, vocab=16, dim=8, ctx=6):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, dim)
        self.pos_emb = nn.Embedding(ctx, dim)
        self.block = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())
        self.out_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1])
        x = self.tok_emb(idx) + self.pos_emb(pos)
        x = x + self.block(x)
        return self.out_head(x)


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    return nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


def evaluate_model(model, val_loader, device):
    model.eval()
    with torch.no_grad():
        losses = [calc_loss_batch(x, y, model, device).item() for x, y in val_loader]
    model.train()
    return sum(losses) / len(losses)


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq=2, record=None):
    train_losses, val_losses, tokens_seen = [], [], 0
    global_step = -1
    for epoch in range(num_epochs):
        model.train()
        for x, y in train_loader:
            loss = calc_loss_batch(x, y, model, device)
            if record is not None:
                g = model.out_head.weight.grad
                record.append(None if g is None else g.clone())
            loss.backward(); optimizer.step()  # expect: ADL018
            tokens_seen += x.numel()
            global_step += 1
            if global_step % eval_freq == 0:
                train_losses.append(loss.item())
                val_losses.append(evaluate_model(model, val_loader, device))
    return train_losses, val_losses, tokens_seen


def make_loader(n=3, batch=2, ctx=6, vocab=16):
    torch.manual_seed(1)
    data = torch.randint(0, vocab, (n, batch, ctx + 1))
    return [(d[:, :-1], d[:, 1:]) for d in data]


def bug_shows():
    """Before the second backward, .grad still holds the first batch's gradient."""
    torch.manual_seed(0)
    model = TinyGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    record = []
    train_model_simple(model, make_loader(), make_loader(1), optimizer, "cpu", 1, record=record)
    return record[0] is None and record[1].abs().sum().item() > 0
