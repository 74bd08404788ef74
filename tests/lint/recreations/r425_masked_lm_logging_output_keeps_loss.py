"""fairseq's masked language modelling criterion returns, with the loss, a
`logging_output` dictionary whose "loss" is the loss tensor itself.  The
trainer keeps each step's logging outputs for the epoch's statistics, so the
dictionaries hold the graph of every step of the epoch after its backward:
host memory grows until the epoch ends.  The fix logs `loss.data` (or
`loss.detach()`).
Buggy line: `"loss": loss,` in `MaskedLmLoss.forward`.
Source: https://github.com/facebookresearch/fairseq/issues/2255"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLmLoss:
    def __init__(self, padding_idx=0):
        self.padding_idx = padding_idx

    def forward(self, model, sample):
        logits = model(sample["net_input"])
        targets = sample["target"]
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), reduction="sum")
        sample_size = targets.numel()
        logging_output = {
            "loss": loss,  # missed: ADL028
            "ntokens": sample["ntokens"],
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output


class TinyLM(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(self.embed(tokens))


class Trainer:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.epoch_logging_outputs = []

    def train_step(self, sample):
        self.optimizer.zero_grad()
        loss, sample_size, logging_output = self.criterion.forward(self.model, sample)
        (loss / sample_size).backward()
        self.optimizer.step()
        self.epoch_logging_outputs.append(logging_output)

    def epoch_loss(self):
        total = sum(log["loss"] for log in self.epoch_logging_outputs)
        return total / sum(log["sample_size"] for log in self.epoch_logging_outputs)


def bug_shows():
    """The trainer's kept logging outputs carry each step's graph."""
    torch.manual_seed(0)
    trainer = Trainer(TinyLM(), MaskedLmLoss())
    for _ in range(3):
        tokens = torch.randint(1, 11, (2, 5))
        trainer.train_step({"net_input": tokens, "target": tokens, "ntokens": 10})
    return all(log["loss"].grad_fn is not None for log in trainer.epoch_logging_outputs)
