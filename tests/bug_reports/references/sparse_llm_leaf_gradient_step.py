import torch

torch.manual_seed(0)
W = torch.randn(5, 4)
target = torch.randn(5, 6)
s = torch.randn(4, 6)
s_learning_rate = 0.01
for chunk in (slice(0, 3), slice(3, 6)):
    s_batch = s[:, chunk].clone().requires_grad_(True)
    for it in range(3):
        loss_s = (W @ s_batch - target[:, chunk]).pow(2).sum()
        loss_s.backward()
        with torch.no_grad():
            s_batch -= s_learning_rate * s_batch.grad
        s_batch.grad.zero_()
    s[:, chunk] = s_batch.detach()
