"""Writing one element of a sigmoid's output: SigmoidBackward needs the output.
Source: https://github.com/pytorch/pytorch/issues/9391 (answer: sigmoid saves its result;
write into a copy or compute out of place)."""
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
b[1] = 2  # PRIMARY
b.sum().backward()
