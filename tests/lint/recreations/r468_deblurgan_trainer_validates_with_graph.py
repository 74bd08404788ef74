"""DeblurGANv2's `Trainer._validate` runs the generator and the losses on
every validation batch with the model in eval mode but gradients on (no
`torch.no_grad()`): each batch builds a full graph, and the loss terms it
hands to the metric counter keep the batch's activations until they are
replaced, so validation takes more memory and time than it needs.  Nothing
raises.  The fix runs the validation loop under `torch.no_grad()`.
Buggy line: `outputs = self.netG(inputs)` in `Trainer._validate`.
Source: https://github.com/VITA-Group/DeblurGANv2/issues/15"""
import torch
import torch.nn as nn


class MetricCounter:
    def __init__(self):
        self.losses = []

    def add_losses(self, l_g, l_content):
        self.losses.append((l_g, l_content))


class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.netG = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.criterionG = nn.MSELoss()
        self.metric_counter = MetricCounter()
        self.last_outputs = None

    def _validate(self, val_batches):
        self.netG.eval()
        for inputs, targets in val_batches:
            outputs = self.netG(inputs)  # expect: ADL031
            loss_content = self.criterionG(outputs, targets)
            loss_G = loss_content + 0.001 * outputs.abs().mean()
            self.metric_counter.add_losses(loss_G.item(), loss_content.item())
            self.last_outputs = outputs


def bug_shows():
    """The validation outputs carry a graph (their activations kept for a backward that never comes)."""
    trainer = Trainer()
    trainer._validate([(torch.randn(4, 8), torch.randn(4, 8)) for _ in range(2)])
    return trainer.last_outputs.grad_fn is not None
