# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 9
# trigger: a hand-written two-layer network keeps all its weights in one flat vector made with
#   requires_grad=True, then views it as a matrix; the manual update reads .grad of the view, which
#   is not a leaf
# source: none found; the pattern as users write it (flat parameter vectors, as in evolution
#   strategies and hypernetwork code)
# results: losses, weight
import torch

torch.manual_seed(0)
weight = torch.randn(6).view(2, 3).requires_grad_()  # PRIMARY
x, y = torch.randn(5, 3), torch.randn(5, 2)
losses = []
for _ in range(2):
    loss = (x @ weight.T - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        weight -= 0.1 * weight.grad
        weight.grad.zero_()
    losses.append(loss.item())
