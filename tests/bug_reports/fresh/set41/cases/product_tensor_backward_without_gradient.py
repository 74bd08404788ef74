"""A first autograd exercise: two vectors that require grad, their elementwise product `A = x*y`,
and `A.backward()` to read `x.grad` and `y.grad`. `A` has two elements, and `backward()` without
an argument only knows how to start from a single number: "grad can be implicitly created only
for scalar outputs". The change, from the page ("Using gradient"): give backward the gradient of
each element, `A.backward(gradient=torch.ones_like(A))`.
Source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
expect: raises"""
import torch

x = torch.tensor([5., 5.], requires_grad=True)
y = torch.tensor([8., 8.], requires_grad=True)

A = x * y

# calculate the gradient
A.backward()

print(x.grad)
print(y.grad)

result = {"x_grad": x.grad, "y_grad": y.grad, "A": A.detach()}
