"""Each student's KL term uses its peer's logits detached (the peer is a fixed target for that
step), so the first backward leaves the second network's graph intact.
Source: https://github.com/chxy95/Deep-Mutual-Learning/issues/5."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_student(hidden):
    return nn.Sequential(nn.Linear(20, hidden), nn.ReLU(), nn.Linear(hidden, 5))


def kl_to_peer(logits, peer_logits):
    return F.kl_div(F.log_softmax(logits, dim=1), F.softmax(peer_logits, dim=1), reduction="batchmean")


net1, net2 = make_student(32), make_student(48)
opt1 = torch.optim.SGD(net1.parameters(), lr=0.1, momentum=0.9)
opt2 = torch.optim.SGD(net2.parameters(), lr=0.1, momentum=0.9)
inputs, labels = torch.randn(32, 20), torch.randint(0, 5, (32,))
losses = []
for step in range(3):
    out1, out2 = net1(inputs), net2(inputs)
    loss1 = F.cross_entropy(out1, labels) + kl_to_peer(out1, out2.detach())
    opt1.zero_grad()
    loss1.backward()
    opt1.step()
    loss2 = F.cross_entropy(out2, labels) + kl_to_peer(out2, out1.detach())
    opt2.zero_grad()
    loss2.backward()
    opt2.step()
    losses.append(torch.stack([loss1.detach(), loss2.detach()]))

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in list(net1.parameters()) + list(net2.parameters())]}
