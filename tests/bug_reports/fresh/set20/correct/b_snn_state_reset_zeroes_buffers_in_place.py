"""A spiking network whose state reset zeroes each membrane buffer and detaches it from the
previous sample's graph (`buffer.zero_().detach_()`), so each sample backpropagates through its
own time steps only.
Source: https://github.com/synsense/sinabs/issues/5."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

STEPS, BATCH, INPUTS, HIDDEN, CLASSES = 6, 8, 12, 16, 3


class SurrogateSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v_mem):
        ctx.save_for_backward(v_mem)
        return (v_mem > 1.0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (v_mem,) = ctx.saved_tensors
        return grad_output / (1.0 + (v_mem - 1.0).abs()) ** 2


class LeakyIntegrateAndFire(nn.Module):
    def __init__(self, decay=0.8):
        super().__init__()
        self.decay = decay
        self.register_buffer("v_mem", torch.zeros(0))

    def reset_states(self):
        for buffer in self.buffers():
            buffer.zero_().detach_()

    def forward(self, current):
        if self.v_mem.shape != current.shape:
            self.v_mem = torch.zeros_like(current)
        v_mem = self.decay * self.v_mem + current
        spikes = SurrogateSpike.apply(v_mem)
        self.v_mem = v_mem - spikes
        return spikes


class SpikingClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(INPUTS, HIDDEN)
        self.lif1 = LeakyIntegrateAndFire()
        self.fc2 = nn.Linear(HIDDEN, CLASSES)
        self.lif2 = LeakyIntegrateAndFire()

    def reset_states(self):
        self.lif1.reset_states()
        self.lif2.reset_states()

    def forward(self, events):
        counts = 0.0
        for t in range(events.shape[0]):
            counts = counts + self.lif2(self.fc2(self.lif1(self.fc1(events[t]))))
        return counts


model = SpikingClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for step in range(4):
    events = (torch.rand(STEPS, BATCH, INPUTS) < 0.4).float() * 1.5
    labels = torch.randint(0, CLASSES, (BATCH,))
    model.reset_states()
    loss = F.cross_entropy(model(events), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
