"""NVIDIA DeepLearningExamples (BERT pre-training for PyTorch), issue 1102: host memory grew
with every optimization step until the machine ran out ("it is going to break my system").  The
training loop keeps running statistics on the device in a small stats object and, after each
micro-batch's backward, accumulates the loss with `stats.device_stat('average_loss').add_(loss)`:
an in-place add of the loss *with its graph* into a tensor that lives for the whole run, so the
accumulator became part of every step's graph and kept them all.  The maintainers merged the
reporter's fix, `add_(loss.clone().detach())` (pull request 1104).
Re-created in my own words with a stats class holding named device tensors, a tiny masked-LM
model returning its loss, gradient accumulation over micro-batches and the periodic logging of
the averaged loss.
Nothing raises: `bug_shows()` shows the accumulator attached to the graph after training.
Buggy line: `stats.device_stat('average_loss').add_(loss)`.
Source: https://github.com/NVIDIA/DeepLearningExamples/issues/1102"""
import torch
import torch.nn as nn


class SyncFreeStats:
    def __init__(self):
        self.device_stats = {}

    def add_stat(self, name, dtype=torch.float32, init=0):
        self.device_stats[name] = torch.tensor(init, dtype=dtype)

    def device_stat(self, name):
        return self.device_stats[name]

    def host_stat_value(self, name):
        return self.device_stats[name].item()


class TinyPretrainingModel(nn.Module):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, input_ids, masked_lm_labels):
        logits = self.lm_head(torch.tanh(self.encoder(self.embeddings(input_ids))))
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), masked_lm_labels.view(-1))


def take_optimizer_step(optimizer, model, stats):
    optimizer.step()
    for param in model.parameters():
        param.grad = None
    stats.device_stat('average_loss').zero_()


def run(steps=3, accumulation_steps=2):
    torch.manual_seed(0)
    model = TinyPretrainingModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    stats = SyncFreeStats()
    stats.add_stat('average_loss')
    logged = []
    for step in range(steps):
        for _ in range(accumulation_steps):
            input_ids = torch.randint(0, 20, (2, 6))
            labels = torch.randint(0, 20, (2, 6))
            loss = model(input_ids, labels) / accumulation_steps
            loss.backward()
            stats.device_stat('average_loss').add_(loss)  # expect: ADL023
        logged.append(stats.host_stat_value('average_loss'))
        if step < steps - 1:
            take_optimizer_step(optimizer, model, stats)
        else:
            optimizer.step()
    return stats, logged


def bug_shows():
    stats, _ = run()
    # the running statistic is only logged, yet it is attached to the training graph
    return stats.device_stat('average_loss').grad_fn is not None
