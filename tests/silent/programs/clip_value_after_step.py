"""A sequence model whose training loop clips the gradients by value after optimizer.step(): the
step has already applied the gradients, and the next iteration's zero_grad() discards what was
clipped."""
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.GRU(3, 6, batch_first=True)
readout = nn.Linear(6, 1)
optimizer = torch.optim.RMSprop([*encoder.parameters(), *readout.parameters()], lr=0.01)
sequences, targets = torch.randn(8, 5, 3), torch.randn(8, 1) * 4
for _ in range(3):
    optimizer.zero_grad()
    states, _ = encoder(sequences)
    loss = (readout(states[:, -1]) - targets).pow(2).mean()
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_value_(encoder.parameters(), clip_value=0.01)  # PRIMARY
result = [p.detach().clone() for p in [*encoder.parameters(), *readout.parameters()]]
