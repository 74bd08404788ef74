"""A first-order Taylor approximation, f(x, a) = g(a) + g'(a)(x - a), whose derivative g' is
computed with `torch.autograd.functional.jacobian(g, a)`, and which is then differentiated in the
expansion point `a`. Simplified as in the report to f(a) = g'(a) (with g(x) = x**3: for g(x) = x
the derivative of g' is zero and PyTorch gives no graph at all): the Jacobian comes back without a
graph, the visualised graph is empty, and `torch.autograd.grad(f(a), a)` raises "element 0 of
tensors does not require grad and does not have a grad_fn". The answer: pass `create_graph=True`
to the Jacobian, so that it can be differentiated again.
Source: https://github.com/pytorch/pytorch/issues/103509
expect: raises"""
import torch


def g(x):
    return x ** 3


def f(a):
    return torch.autograd.functional.jacobian(g, a)


a = torch.ones(1, requires_grad=True)
value = f(a)
print(value)
df_da = torch.autograd.grad(value.sum(), a)[0]
print(df_da)

result = {"value": value.detach(), "df_da": df_da}
