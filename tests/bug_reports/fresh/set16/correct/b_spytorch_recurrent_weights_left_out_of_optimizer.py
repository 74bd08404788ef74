"""The recurrent spiking network with its recurrent weights `v1` in the optimizer
(`params = [w1, w2, v1]`), so that all three weight matrices train.
Source: https://github.com/fzenke/spytorch/issues/7 (fix: commit bbab0a2)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, STEPS, INPUTS, HIDDEN, CLASSES = 8, 20, 10, 16, 3
ALPHA, BETA = 0.9, 0.8


class SurrogateSpike(torch.autograd.Function):
    scale = 10.0

    @staticmethod
    def forward(ctx, membrane):
        ctx.save_for_backward(membrane)
        return (membrane > 0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (membrane,) = ctx.saved_tensors
        return grad_output / (SurrogateSpike.scale * membrane.abs() + 1.0) ** 2


spike_fn = SurrogateSpike.apply

w1 = (torch.randn(INPUTS, HIDDEN) * 0.5).requires_grad_()
v1 = (torch.randn(HIDDEN, HIDDEN) * 0.2).requires_grad_()
w2 = (torch.randn(HIDDEN, CLASSES) * 0.5).requires_grad_()


def run_network(inputs):
    h1_from_input = torch.einsum("abc,cd->abd", inputs, w1)
    syn = torch.zeros(BATCH, HIDDEN)
    mem = torch.zeros(BATCH, HIDDEN)
    out = torch.zeros(BATCH, HIDDEN)
    flt = torch.zeros(BATCH, CLASSES)
    readout = torch.zeros(BATCH, CLASSES)
    readouts = []
    for t in range(STEPS):
        h1 = h1_from_input[:, t] + out @ v1
        out = spike_fn(mem - 1.0)
        reset = out.detach()
        syn = ALPHA * syn + h1
        mem = (BETA * mem + syn) * (1.0 - reset)
        h2 = out @ w2
        flt = ALPHA * flt + h2
        readout = BETA * readout + flt
        readouts.append(readout)
    return torch.stack(readouts, dim=1)


inputs = (torch.rand(BATCH, STEPS, INPUTS) < 0.3).float() * 2.0
labels = torch.randint(0, CLASSES, (BATCH,))
params = [w1, w2, v1]
optimizer = torch.optim.Adam(params, lr=2e-2)
losses = []
for epoch in range(6):
    readouts = run_network(inputs)
    scores, _ = readouts.max(dim=1)
    loss = F.cross_entropy(scores, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [w1.detach().clone(), v1.detach().clone(), w2.detach().clone()]}
