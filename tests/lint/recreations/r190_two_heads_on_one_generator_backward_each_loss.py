"""Two classifiers trained on the output of one shared generator, each with
its own loss: `gen = generator(data)`, `loss1 = criterion(classifier_1(gen),
...)`, `loss1.backward()`, then `loss2 = criterion(classifier_2(gen), ...)`,
`loss2.backward()`.  The first backward frees the generator's graph that the
second goes through ("Trying to backward through the graph a second time");
summing the losses, or `retain_graph=True` on the first, works.  The report
was filed against torch_xla (where the process crashed); the same loop on
the CPU raises.
Buggy line: `loss2.backward()` (after `loss1.backward()` freed `gen`'s graph).
Expected finding: ADL019 there.
Source: https://github.com/pytorch/xla/issues/1961"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def map_train(loader, epochs=1):
    generator = nn.Linear(1, 10)
    classifier_1 = nn.Linear(10, 1)
    classifier_2 = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(
        list(generator.parameters()) + list(classifier_1.parameters()) + list(classifier_2.parameters()),
        lr=0.01,
    )
    for epoch in range(epochs):
        for data in loader:
            optimizer.zero_grad()
            gen = generator(data.view(-1, 1))
            out_1 = classifier_1(gen)
            loss1 = F.mse_loss(out_1, torch.zeros_like(out_1))
            loss1.backward()
            out_2 = classifier_2(gen)
            loss2 = F.cross_entropy(out_2, torch.zeros(out_2.shape[0], dtype=torch.long))
            loss2.backward()  # expect: ADL019
            optimizer.step()


def run():
    torch.manual_seed(0)
    loader = torch.utils.data.DataLoader(torch.arange(8, dtype=torch.float32), batch_size=4, drop_last=True)
    map_train(loader)
