"""Ray's DeepSpeed fine-tuning template summed each step's loss into the
epoch's total with `loss_sum += loss`: the loss tensor with its graph, so the
total kept every step's graph alive until the epoch ended and training leaked
memory.  Nothing raises.  The fix adds `loss.item()` (or `loss.detach()`).
Buggy line: `loss_sum += loss` in `training_function`.
Source: https://github.com/ray-project/ray/pull/40940"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalLMOutput:
    def __init__(self, loss, logits):
        self.loss = loss
        self.logits = logits


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        logits = self.lm_head(torch.tanh(self.embed(input_ids)))
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return CausalLMOutput(loss, logits)


def training_function(config, model, train_dataloader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    for epoch in range(config["num_epochs"]):
        loss_sum = torch.tensor(0.0)
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            loss_sum += loss  # expect: ADL023
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
        epoch_loss = loss_sum / len(train_dataloader)
    return epoch_loss


def bug_shows():
    """The epoch's loss is a graph tensor reaching every step's graph."""
    torch.manual_seed(0)
    batches = []
    for _ in range(3):
        ids = torch.randint(0, 11, (2, 5))
        batches.append({"input_ids": ids, "labels": ids})
    return training_function({"lr": 1e-3, "num_epochs": 1}, TinyCausalLM(), batches).grad_fn is not None
