"""A model of two parts trained in two steps, as the post describes it: step 1 updates `module1`
(an encoder, with its own decoder) from `loss_1`; step 2 updates `module2` (a classifier on the
encoder's features) from `loss_2`. The features are computed once, for step 1, and handed to
`module2` as they are, so `loss_2` reaches back through `module1`'s graph, which `loss_1.backward()`
has already freed: "Trying to backward through the graph a second time". The change (the post's
second method): `module2` takes the features detached, since step 2 updates `module2` only.
Source: https://e-com-net.com/article/1738400695981236224.htm
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

module1 = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
decoder = nn.Linear(4, 8)
module2 = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))

optimizer1 = torch.optim.Adam(list(module1.parameters()) + list(decoder.parameters()), lr=1e-2)
optimizer2 = torch.optim.Adam(module2.parameters(), lr=1e-2)
Loss1 = nn.MSELoss()
Loss2 = nn.CrossEntropyLoss()

data = torch.randn(32, 8)
label2 = torch.randint(0, 3, (32,))

history = []
for step in range(4):
    feature = module1(data)

    # step 1: update module1 with loss_1
    loss_1 = Loss1(decoder(feature), data)
    module1.zero_grad()
    decoder.zero_grad()
    loss_1.backward()
    optimizer1.step()

    # step 2: update module2 with loss_2
    loss_2 = Loss2(module2(feature.detach()), label2)
    module2.zero_grad()
    loss_2.backward()
    optimizer2.step()
    history.append((loss_1.item(), loss_2.item()))

result = {"history": torch.tensor(history),
          "params": [p.detach().clone() for m in (module1, decoder, module2) for p in m.parameters()]}
