"""Manual gradient descent: the weight made with requires_grad=True is then cast with `.type(...)`
(the report used `.to(device)`), so the name holds a non-leaf whose `.grad` stays None and the
update fails with a TypeError.
Source: https://blog.youkuaiyun.com/fengyu7789/article/details/123215466 (fix: create the tensor with
the dtype/device and requires_grad in one call).
expect: raises"""
import torch

torch.manual_seed(123)
x = torch.rand(10, 3)
y = torch.rand(10, 1)
w = torch.rand(3, 1, requires_grad=True).type(torch.float64)
lr = 0.1
for step in range(3):
    loss = ((x.double() @ w - y.double()) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        w.grad.zero_()
result = {"loss": loss.detach(), "w": w.detach()}
