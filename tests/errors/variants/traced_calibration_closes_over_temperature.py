# message: Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter
#   or input, or detaching the gradient
# code: AD143 (catalogue: trace_constant_requires_grad)
# set: 3
# trigger: temperature scaling: a plain function (not a module) divides the logits by a global
#   temperature tensor that requires grad; the function is traced with torch.jit.trace
# source: none found; the pattern as users write it
# results: losses, temperature
import torch
import torch.nn.functional as F

temperature = torch.tensor(1.5, requires_grad=True)


def calibrate(logits):
    return logits / temperature


torch.manual_seed(0)
logits, labels = torch.randn(8, 3), torch.randint(0, 3, (8,))
traced = torch.jit.trace(calibrate, logits)  # PRIMARY
optimizer = torch.optim.SGD([temperature], lr=0.1)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(traced(logits), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
