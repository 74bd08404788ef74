"""Generative adversarial perturbations: the generated perturbation (not a leaf) is rescaled
through `.data`, which autograd does not see, so the generator's gradient is off by that factor
(no error).
Source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4 (answer:
scale out of place so autograd records it).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Linear(4, 4)
classifier = nn.Linear(4, 2)
image = torch.rand(3, 4)
mag = 0.1

delta = torch.tanh(generator(torch.randn(3, 4)))
delta.data = delta.data * mag
adv = image + delta
loss = -nn.functional.cross_entropy(classifier(adv), torch.tensor([0, 1, 0]))
loss.backward()
result = {"loss": loss.detach(), "w": generator.weight.grad, "b": generator.bias.grad}
