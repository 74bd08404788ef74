"""super-gradients' `Trainer._backward_step` clipped the gradients after
every backward pass, even when `batch_accumulate > 1` accumulates several
batches before one optimizer step: "Clipping was done each batch - moved to
being done once before gradient step" (and, with mixed precision, before
unscaling).  Each clip rescales the running sum, so the batches
accumulated first are shrunk again at every later backward and the step
applies a differently weighted gradient, not the accumulated gradient
clipped once.  Nothing raises.
Buggy line: `torch.nn.utils.clip_grad_norm_(...)` before the accumulation check in `_backward_step`.
Source: https://github.com/Deci-AI/super-gradients/pull/653"""
import torch
import torch.nn as nn


class TrainingParams:
    def __init__(self, clip_grad_norm=None, batch_accumulate=1, mixed_precision=False, max_epochs=1):
        self.clip_grad_norm = clip_grad_norm
        self.batch_accumulate = batch_accumulate
        self.mixed_precision = mixed_precision
        self.max_epochs = max_epochs


class Trainer:
    def __init__(self, net, training_params, train_loader):
        self.net = net
        self.training_params = training_params
        self.train_loader = train_loader
        self.batch_accumulate = training_params.batch_accumulate
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
        self.scaler = torch.amp.GradScaler("cpu", enabled=training_params.mixed_precision)
        self.criterion = nn.MSELoss()
        self.step_grads = []

    def _backward_step(self, loss, epoch, batch_idx):
        self.scaler.scale(loss).backward()
        # APPLY GRADIENT CLIPPING IF REQUIRED
        if self.training_params.clip_grad_norm:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.training_params.clip_grad_norm)  # missed: ADL029
        # ACCUMULATE GRADIENT FOR X BATCHES BEFORE OPTIMIZING
        integrated_batches_num = batch_idx + len(self.train_loader) * epoch + 1
        if integrated_batches_num % self.batch_accumulate == 0:
            self.step_grads.append(torch.cat([p.grad.flatten() for p in self.net.parameters()]).clone())
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()

    def _train_epoch(self, epoch):
        self.net.train()
        for batch_idx, (inputs, targets) in enumerate(self.train_loader):
            outputs = self.net(inputs)
            loss = self.criterion(outputs, targets)
            self._backward_step(loss, epoch, batch_idx)

    def train(self):
        for epoch in range(self.training_params.max_epochs):
            self._train_epoch(epoch)


def bug_shows():
    """The applied gradient is not the accumulated gradient clipped once: earlier batches are shrunk again."""
    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    reference = nn.Linear(4, 2)
    reference.load_state_dict(net.state_dict())
    batches = [(torch.randn(8, 4) * 10, torch.randn(8, 2) * 10) for _ in range(4)]
    trainer = Trainer(net, TrainingParams(clip_grad_norm=1.0, batch_accumulate=4), batches)
    trainer.train()
    for inputs, targets in batches:
        nn.MSELoss()(reference(inputs), targets).backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), 1.0)
    expected = torch.cat([p.grad.flatten() for p in reference.parameters()])
    return not torch.allclose(trainer.step_grads[0], expected, atol=1e-3)
