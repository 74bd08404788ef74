"""An FGSM attack class: the input is wrapped for gradients and then moved,
`input_for_gradient = Variable(input, requires_grad=True).to(self.device)`. The move returns a
new tensor, the output of a copy, which is not a leaf: after `loss.backward()` its `.grad` is
None (the leaf that received the gradient is the unmoved `Variable`), and the attack fails on
`torch.sign(input_for_gradient.grad.data)` with "'NoneType' object has no attribute 'data'". On this CPU
re-creation the images come from a float64 array and the move carries the dtype cast
(`.to(self.device, torch.float32)`), which makes the same non-leaf copy that the GPU move made for
the author. The change: move first, then ask for gradients,
`Variable(input.to(self.device, torch.float32), requires_grad=True)`.
Source: https://m.haomeiwen.com/subject/ookkactx.html
expect: raises"""
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
np.random.seed(0)


class FGSM:
    def __init__(self, model, criterion, epsilon, device):
        self.model = model
        self.criterion = criterion
        self.epsilon = epsilon
        self.device = device
        assert isinstance(model, torch.nn.Module), "Input parameter model is not nn.Module. Check the model"
        assert isinstance(criterion, torch.nn.Module), "Input parameter criterion is no Loss. Check the criterion"
        assert (0 <= epsilon <= 1), "episilon must be 0 <= epsilon <= 1"
        self.model.eval()

    def __call__(self, input, labels):
        # For calculating gradient
        input_for_gradient = Variable(input, requires_grad=True).to(self.device, torch.float32)
        out = self.model(input_for_gradient)
        loss = self.criterion(out, Variable(labels))

        # Calculate gradient
        loss.backward()

        # Calculate sign of gradient
        signs = torch.sign(input_for_gradient.grad.data)

        # Add
        input_for_gradient.data = input_for_gradient.data + (self.epsilon * signs)
        return input_for_gradient.detach(), signs


model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 10))
attack = FGSM(model, nn.CrossEntropyLoss(), 0.1, torch.device("cpu"))
images = torch.from_numpy(np.random.rand(8, 1, 28, 28))
labels = torch.randint(0, 10, (8,))

adversarial, signs = attack(images, labels)
with torch.no_grad():
    logits = model(adversarial)

result = {"adversarial": adversarial, "signs": signs, "logits": logits}
