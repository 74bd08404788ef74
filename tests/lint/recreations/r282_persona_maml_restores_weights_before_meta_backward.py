"""PAML meta-learns a persona dialogue model with first-order MAML: for each
task it fine-tunes `meta_net` on the task's training dialogues, computes the
validation loss with the adapted weights and adds it to `batch_loss`, then
restores the original weights with
`meta_net.load_state_dict({name: weights_original[name] ...})`.
`load_state_dict` copies into the parameters in place, and those parameters
are saved in the graph of every validation loss in `batch_loss`; the meta
update's `batch_loss.backward()` fails ("one of the variables needed for
gradient computation has been modified by an inplace operation").  The fix
computes the task's gradient before restoring the weights.
Buggy line: `meta_net.load_state_dict({name: weights_original[name] for name in weights_original})`
in `meta_train`.
Expected finding: ADL003 there (parameters written between the loss and its
backward pass).
Source: https://github.com/HLTCHKUST/PAML/issues/18"""
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Seq2SeqLM(nn.Module):
    def __init__(self, vocab=12, dim=8, lr=0.1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)

    def forward(self, tokens):
        hidden, _ = self.rnn(self.embedding(tokens))
        return self.out(hidden)

    def loss(self, batch):
        tokens, targets = batch
        logits = self(tokens)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def train_one_batch(self, batch):
        self.optimizer.zero_grad()
        loss = self.loss(batch)
        loss.backward()
        self.optimizer.step()
        return loss.item()


def do_learning_fix_step(model, train_iter, val_iter, iterations):
    for _ in range(iterations):
        for batch in train_iter:
            model.train_one_batch(batch)
    val_loss = sum(model.loss(batch) for batch in val_iter) / len(val_iter)
    return val_loss


def meta_train(meta_net, meta_optimizer, tasks, meta_iteration=1):
    weights_original = deepcopy(meta_net.state_dict())
    batch_loss = 0
    for train_iter, val_iter in tasks:
        val_loss = do_learning_fix_step(meta_net, train_iter, val_iter, iterations=meta_iteration)
        batch_loss += val_loss
        meta_net.load_state_dict({name: weights_original[name] for name in weights_original})  # expect: ADL003
    meta_optimizer.zero_grad()
    batch_loss /= len(tasks)
    batch_loss.backward()
    nn.utils.clip_grad_norm_(meta_net.parameters(), 1.0)
    meta_optimizer.step()


def _task():
    batch = (torch.randint(0, 12, (2, 5)), torch.randint(0, 12, (2, 5)))
    return [batch], [batch]


def run():
    torch.manual_seed(0)
    meta_net = Seq2SeqLM()
    meta_optimizer = torch.optim.Adam(meta_net.parameters(), lr=1e-3)
    meta_train(meta_net, meta_optimizer, [_task(), _task()])
