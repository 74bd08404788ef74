# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 7
# trigger: a hand-written softmax regression creates its weight with requires_grad=True and then
#   transposes it (.T) to the (features, classes) layout it multiplies with; the optimizer gets
#   the transposed tensor
# source: none found; the pattern as users write it
# results: losses, weight
import torch
import torch.nn.functional as F


torch.manual_seed(0)
weight = torch.randn(2, 3, requires_grad=True).T  # PRIMARY
bias = torch.zeros(2, requires_grad=True)
optimizer = torch.optim.SGD([weight, bias], lr=0.1)
x, labels = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(x @ weight + bias, labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
