# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 14
# trigger: hand-written softmax regression made device-agnostic: the weights are created with
#   requires_grad=True and then moved with .to(device, dtype) (a copy, not a leaf), and the manual
#   update reads W.grad, which stays None
# source: none found; the pattern as users write it (requires_grad=True before .to(device))
# results: W, losses
import torch
import torch.nn.functional as F

device, dtype = torch.device("cpu"), torch.float64
torch.manual_seed(0)
x = torch.randn(8, 4, device=device, dtype=dtype)
labels = torch.tensor([0, 1, 2, 1, 0, 2, 2, 1], device=device)
W = torch.zeros(4, 3, requires_grad=True).to(device, dtype)  # PRIMARY
lr = 0.5
losses = []
for _ in range(3):
    loss = F.cross_entropy(x @ W, labels)
    loss.backward()
    with torch.no_grad():
        W -= lr * W.grad
        W.grad.zero_()
    losses.append(loss.item())
