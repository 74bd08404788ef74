# message: attempting to assign a gradient of size '[6, 27]' to a tensor of size '[6, 3, 3, 3]'. Please ensure that the gradient and the tensor are the same size
# code: AD131 (catalogue: grad_assigned_wrong_size)
# set: 30
# trigger: a Lightning-like module's on_after_backward hook normalises each convolution filter's
#   gradient to unit norm (flatten(1), divide by the row norms) and assigns the flat result back to
#   p.grad without giving it the weight's shape
# source: none found; the pattern as users write it (filter-wise gradient normalisation in a hook)
# results: losses, module
import torch
from torch import nn


class ConvClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)
        self.head = nn.Linear(6, 2)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.05)

    def forward(self, images):
        return self.head(torch.relu(self.conv(images)).mean((2, 3)))

    def training_step(self, batch):
        images, labels = batch
        return nn.functional.cross_entropy(self(images), labels)

    def on_after_backward(self):
        for p in self.parameters():
            if p.dim() == 4:
                flat = p.grad.flatten(1)
                p.grad = flat / flat.norm(dim=1, keepdim=True).clamp(min=1e-8)  # PRIMARY


class Trainer:
    def fit(self, module, batches):
        losses = []
        for batch in batches:
            module.optimizer.zero_grad()
            loss = module.training_step(batch)
            loss.backward()
            module.on_after_backward()
            module.optimizer.step()
            losses.append(loss.detach())
        return losses


torch.manual_seed(0)
module = ConvClassifier()
batches = [(torch.randn(4, 3, 6, 6), torch.randint(0, 2, (4,))) for _ in range(3)]
losses = Trainer().fit(module, batches)
