"""FizzBuzz with a hand-written two-layer network and a numpy-like update loop (Hands-On Deep
Learning with PyTorch, chapter 2, numpy_like_fizbuz.py): the weights are created as
`torch.randn(input_size, hidden_size, requires_grad=True).type(dtype)`, where `dtype` is
`torch.cuda.FloatTensor` when a GPU is present. `.type()` to another type returns a converted copy,
which is not a leaf: the tensors the loop updates are not the ones that receive gradients, their
`.grad` stays None, and the update `w1.data -= lr * w1.grad.data` fails with "AttributeError:
'NoneType' object has no attribute 'data'". (This CPU re-creation uses `torch.DoubleTensor` as the
other type; with a type equal to the tensor's own, `.type()` returns the tensor itself and nothing
fails, which is why the program ran on the author's CPU.)
Source: https://github.com/hhsecond/HandsOnDeepLearningWithPytorch/issues/2 ("w1 = torch.randn(input_size,
hidden_size, requires_grad=True).type(dtype) causes w1 to forget it is a user created variable";
the author: "I changed the code to use `device` and `dtype` separately").
expect: raises"""
import numpy as np
import torch

torch.manual_seed(0)


def binary_encode(number, digits):
    return np.array([number >> d & 1 for d in range(digits)])


def fizzbuzz_encode(number):
    if number % 15 == 0:
        return np.array([0, 0, 0, 1])
    if number % 5 == 0:
        return np.array([0, 0, 1, 0])
    if number % 3 == 0:
        return np.array([0, 1, 0, 0])
    return np.array([1, 0, 0, 0])


input_size, hidden_size, lr, batches = 10, 32, 0.01, 16
trX = np.array([binary_encode(i, input_size) for i in range(101, 165)])
trY = np.array([fizzbuzz_encode(i) for i in range(101, 165)])

dtype = torch.DoubleTensor      # stands for torch.cuda.FloatTensor: a type other than randn's own
x = torch.from_numpy(trX).type(dtype)
y = torch.from_numpy(trY).type(dtype)

w1 = torch.randn(input_size, hidden_size).type(dtype).requires_grad_()
w2 = torch.randn(hidden_size, 4).type(dtype).requires_grad_()
b1 = torch.zeros(1, hidden_size).type(dtype).requires_grad_()
b2 = torch.zeros(1, 4).type(dtype).requires_grad_()

losses = []
for epoch in range(3):
    for batch in range(len(trX) // batches):
        start, end = batch * batches, (batch + 1) * batches
        x_, y_ = x[start:end], y[start:end]
        hyp = x_.matmul(w1).add(b1).sigmoid().matmul(w2).add(b2).sigmoid()
        output = (hyp - y_).pow(2).sum() / 2.0
        output.backward()

        w1.data -= lr * w1.grad.data
        w2.data -= lr * w2.grad.data
        b1.data -= lr * b1.grad.data
        b2.data -= lr * b2.grad.data
        w1.grad.data.zero_()
        w2.grad.data.zero_()
        b1.grad.data.zero_()
        b2.grad.data.zero_()
        losses.append(output.detach())

result = {"losses": losses, "weights": [t.detach().clone() for t in (w1, w2, b1, b2)]}
