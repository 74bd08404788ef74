# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [8, 3]], which is output 0 of AsStrided, is at version 2; expected version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute
#   its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD103 (catalogue: saved_tensor_modified; AD103 is the recorder's code for a write made by
#   optimizer.step())
# set: 29
# trigger: deep mutual learning of two peer classifiers, each with its own optimizer, in one
#   Trainer-like step: peer one's loss (its KL to peer two's detached probabilities) is backpropagated
#   with retain_graph=True and stepped, then peer two's KL term, written against peer one's logits
#   without detach(), backpropagates into peer one's graph, whose last weight the step changed
# source: none found fresh (deep mutual learning as tutorials write it, one peer updated after the other)
# results: peers
import torch
from torch import nn
import torch.nn.functional as F


def peer():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


class MutualLearning:
    def __init__(self, peers, temperature=2.0):
        self.peers = peers
        self.optimizers = [torch.optim.SGD(p.parameters(), lr=0.1) for p in peers]
        self.temperature = temperature

    def mimicry(self, logits, other):
        t = self.temperature
        return F.kl_div(F.log_softmax(logits / t, -1), F.softmax(other / t, -1), reduction="batchmean")

    def step(self, x, y):
        logits_one, logits_two = self.peers[0](x), self.peers[1](x)
        loss_one = F.cross_entropy(logits_one, y) + self.mimicry(logits_one, logits_two.detach())
        self.optimizers[0].zero_grad()
        loss_one.backward(retain_graph=True)
        self.optimizers[0].step()
        loss_two = F.cross_entropy(logits_two, y) + self.mimicry(logits_two, logits_one.detach())  # PRIMARY
        self.optimizers[1].zero_grad()
        loss_two.backward()
        self.optimizers[1].step()


torch.manual_seed(0)
peers = [peer(), peer()]
trainer = MutualLearning(peers)
for _ in range(3):
    trainer.step(torch.randn(6, 4), torch.randint(0, 3, (6,)))
