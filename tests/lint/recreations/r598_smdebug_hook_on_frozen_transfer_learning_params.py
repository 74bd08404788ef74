"""SageMaker's PyTorch training toolkit with the SageMaker Debugger (smdebug)
hook: a transfer-learning job on a pretrained ResNet-152 whose feature layers
are frozen (`param.requires_grad = False`) fails at the first forward with
"cannot register a hook on a tensor that doesn't require gradient".  The
debugger's `register_module` walks every parameter and registers a gradient
hook on each (`param.register_hook(...)`), frozen or not.  The fix (smdebug
PR 193, "Register If Tensor Requires Gradients") checks
`param.requires_grad` first.  Re-created as the hook class (`register_hook`
on the first forward, `register_module`, `_backward_apply`), a small frozen
backbone with a new head, and the training loop of the job.  Raises at the
first batch.
Buggy line: `param.register_hook(self.backward_hook(pname))` in
`_backward_apply` (a frozen parameter does not require grad).
Source: https://github.com/aws/sagemaker-pytorch-training-toolkit/issues/197
and the fix https://github.com/awslabs/sagemaker-debugger/pull/193"""
import torch
import torch.nn as nn


class Hook:
    def __init__(self):
        self.gradients = {}
        self.registered = False

    def backward_hook(self, pname):
        def hook(grad):
            self.gradients[pname] = grad.norm().item()
        return hook

    def _backward_apply(self, module):
        for pname, param in module.named_parameters():
            param.register_hook(self.backward_hook(pname))  # missed: no rule (register_hook on a parameter frozen by requires_grad = False)

    def register_module(self, module):
        self._backward_apply(module)

    def forward_pre_hook(self, module, inputs):
        if not self.registered:
            self.register_module(module)
            self.registered = True

    def register_hook(self, module):
        module.register_forward_pre_hook(self.forward_pre_hook)


class TransferNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        for param in self.features.parameters():
            param.requires_grad = False
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        return self.fc(self.features(x))


def train_epoch(loader, model, loss_fn, optimizer):
    model.train()
    for data, target in loader:
        outputs = model(data)
        loss = loss_fn(outputs, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = TransferNet()
    Hook().register_hook(model)
    optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)
    loader = [(torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,))) for _ in range(2)]
    train_epoch(loader, model, nn.CrossEntropyLoss(), optimizer)
