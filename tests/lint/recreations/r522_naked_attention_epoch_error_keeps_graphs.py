"""NakedAttention's training script accumulates the epoch's average loss and
accuracy from each batch's tensors: `e_train += e_batch/len(loader_train)`.
"you are effectively building a computational graph that gets bigger every
time you run `e_train += e_batch` ... I think you can fix this by running
`.detach()`" (the reporter ran out of RAM on Kaggle; fixed by the author).
Nothing raises; the epoch's error holds every batch's graph.
Buggy line: `e_train += e_batch/len(loader_train)` in the training loop.
Source: https://github.com/jostmey/NakedAttention/issues/1"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_tokens=10, d=8, n_classes=2):
        super().__init__()
        self.embedding = nn.Embedding(n_tokens, d)
        self.query = nn.Parameter(torch.randn(d))
        self.linear = nn.Linear(d, n_classes)

    def forward(self, xs):
        h = self.embedding(xs)
        w = torch.softmax(h @ self.query, 1)
        return self.linear((w.unsqueeze(-1) * h).sum(1))


def accuracy(ls, ys):
    return (ls.argmax(1) == ys).float().mean()


def train(model, loader_train, num_epochs=1, history=None):
    loss = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(num_epochs):
        e_train = 0.0
        a_train = 0.0
        model.train()
        for xs_batch, ys_batch in loader_train:
            ls_batch = model(xs_batch)
            e_batch = loss(ls_batch, ys_batch)
            a_batch = accuracy(ls_batch, ys_batch)
            optimizer.zero_grad()
            e_batch.backward()
            optimizer.step()
            e_train += e_batch / len(loader_train)  # expect: ADL023
            a_train += a_batch / len(loader_train)
        if history is not None:
            history.append(e_train)


def bug_shows():
    """The epoch's error is a tensor holding the batches' graphs."""
    torch.manual_seed(0)
    loader = [(torch.randint(0, 10, (2, 5)), torch.randint(0, 2, (2,))) for _ in range(3)]
    history = []
    train(Model(), loader, history=history)
    return history[0].grad_fn is not None
