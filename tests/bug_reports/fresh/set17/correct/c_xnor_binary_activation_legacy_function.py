"""The binarising Function in the new style: static `forward(ctx, input)` / `backward(ctx,
grad_output)`, called through `BinActive.apply(x)` (the accepted fix).
Source: https://github.com/jiecaoyu/XNOR-Net-PyTorch/pull/118."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BinActive(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input.abs() >= 1] = 0
        return grad_input


class BinaryLeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 5)
        self.bn2 = nn.BatchNorm2d(8, affine=False)
        self.conv2 = nn.Conv2d(8, 16, 5)
        self.bn3 = nn.BatchNorm1d(16 * 4 * 4, affine=False)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = BinActive.apply(self.bn2(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        x = BinActive.apply(self.bn3(x))
        return self.fc(x)


model = BinaryLeNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images, labels = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
losses = []
for step in range(3):
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
