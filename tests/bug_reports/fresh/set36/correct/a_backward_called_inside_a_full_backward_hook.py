"""A full backward hook that runs a second, independent autograd computation (pytorch/pytorch#90520,
"Tensor can not get grad_fn attribute in backward hook"): outside any hook, `inp = torch.eye(4, 5,
requires_grad=True); out = (inp + 1).pow(2).t(); out.backward(...)` works. The same lines inside a
hook registered with `register_full_backward_hook` on a Conv2d print `out` without a grad_fn, and
`out.backward(...)` fails with "element 0 of tensors does not require grad and does not have a
grad_fn", because autograd runs backward hooks with grad mode off. The answer: turn grad mode back
on inside the hook (`with torch.enable_grad():`), as the autograd notes say for hooks that need a
graph.
Source: https://github.com/pytorch/pytorch/issues/90520
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
outside_grad = inp.grad.clone()

hook_grads = []


def hook_out(module, grad_in, grad_out):
    with torch.enable_grad():
        inp = torch.eye(4, 5, requires_grad=True)
        out = (inp + 1).pow(2).t() * grad_out[0].mean()
        out.backward(torch.ones_like(out), retain_graph=True)
    hook_grads.append(inp.grad.clone())


model_out = nn.Conv2d(3, 3, 1, 1)
input_out = torch.randn([1, 3, 16, 16])
back_hook_out = model_out.register_full_backward_hook(hook_out)
model_out(input_out).sum().backward()
back_hook_out.remove()

result = {"outside": outside_grad, "in_hook": torch.stack(hook_grads),
          "weight_grad": model_out.weight.grad.clone()}
