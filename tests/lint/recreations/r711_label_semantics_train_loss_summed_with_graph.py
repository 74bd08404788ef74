"""LabelSemantics (few-shot NER with label semantics), the training script as stored (the same
repository as issue 5, a second hazard in the same file): the loop logs a running average of the
training loss with `tra_loss += loss` after `loss.backward()` -- `tra_loss` starts as the float
0.0, so from the first batch on it is a tensor that carries every batch's graph for the whole run
(the epochs loop never resets it), and `print(... tra_loss / steps)` formats it.  Memory grows
with each batch; the value is only printed.  (`tra_loss += loss.item()` keeps the same log.)
Re-created in my own words with the script's loop shape: a model returning the match scores,
zero_grad / backward / clip_grad_norm_ / step / scheduler step, the every-30-steps log and the
per-epoch log.
Nothing raises: `bug_shows()` shows the logged running loss attached to a graph.
Buggy line: `tra_loss += loss`.
Source: https://github.com/TianWuYuJiangHenShou/LabelSemantics/blob/5e4171eddfb00fa3116cee8baeef7deefc3f3f30/LabelSemantics.py"""
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss


class TokenScorer(nn.Module):
    def __init__(self, vocab=30, hidden=8, n_tags=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.label_representation = nn.Parameter(torch.randn(n_tags, hidden))

    def forward(self, input_ids):
        token_embeddings = torch.tanh(self.embeddings(input_ids))
        matrix_embeddings = torch.matmul(token_embeddings, self.label_representation.t())
        return matrix_embeddings, torch.argmax(matrix_embeddings, dim=-1)


def run(epochs=2):
    torch.manual_seed(0)
    n_tags = 3
    fewshot = TokenScorer(n_tags=n_tags)
    optimizer = torch.optim.Adam(fewshot.parameters(), lr=1e-5)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    loss_function = CrossEntropyLoss()
    train_dataloader = [(torch.randint(0, 30, (2, 5)), torch.randint(0, n_tags, (2, 5))) for _ in range(3)]
    tra_loss, steps = 0.0, 0
    for i in range(epochs):
        fewshot.train()
        for step, (input_ids, labels) in enumerate(train_dataloader):
            matrix_embeddings, label_indexs = fewshot(input_ids)
            loss = loss_function(matrix_embeddings.view(-1, n_tags), labels.view(-1))
            optimizer.zero_grad()
            loss.backward()
            tra_loss += loss  # expect: ADL023
            steps += 1
            torch.nn.utils.clip_grad_norm_(parameters=fewshot.parameters(), max_norm=1.0)
            optimizer.step()
            scheduler.step()
            if step % 30 == 0:
                print("epoch :{},step :{} ,Train loss: {}".format(i, step, tra_loss / steps))
        print("Training Loss of epoch {}:{}".format(i, tra_loss / steps))
    return tra_loss


def bug_shows():
    return run().grad_fn is not None
