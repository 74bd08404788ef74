import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.GRU(3, 6, batch_first=True)
readout = nn.Linear(6, 1)
parameters = [*encoder.parameters(), *readout.parameters()]
clipped = len(list(encoder.parameters()))
sequences, targets = torch.randn(8, 5, 3), torch.randn(8, 1) * 4
square_avg = [torch.zeros_like(p) for p in parameters]
for _ in range(3):  # RMSprop by hand (alpha 0.99, eps 1e-8); the encoder's gradients clipped to [-0.01, 0.01]
    states, _ = encoder(sequences)
    loss = (readout(states[:, -1]) - targets).pow(2).mean()
    grads = list(torch.autograd.grad(loss, parameters))
    grads = [g.clamp(-0.01, 0.01) if i < clipped else g for i, g in enumerate(grads)]
    with torch.no_grad():
        for p, g, avg in zip(parameters, grads, square_avg):
            avg.mul_(0.99).addcmul_(g, g, value=0.01)
            p.addcdiv_(g, avg.sqrt().add_(1e-8), value=-0.01)
result = [p.detach().clone() for p in parameters]
