"""CheXNet's `epochVal` runs the validation batches with the model in eval
mode but without turning gradients off (the `volatile` flag it relied on no
longer does anything), and adds each batch's loss tensor to
`losstensorMean`, which it returns for the scheduler.  The sum keeps every
validation batch's graph, activations included, so memory runs out at the
end of the first epoch; nothing raises.  The fix runs the loop under
`torch.no_grad()` (or adds `losstensor.item()`).
Buggy line: `losstensorMean += losstensor` in `ChexnetTrainer.epochVal`.
Source: https://github.com/zoogzog/chexnet/issues/12"""
import torch
import torch.nn as nn


class DenseNet121(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.densenet121 = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, classes), nn.Sigmoid())

    def forward(self, x):
        return self.densenet121(x)


class ChexnetTrainer:
    @staticmethod
    def epochVal(model, dataLoader, loss):
        model.eval()
        lossVal = 0
        lossValNorm = 0
        losstensorMean = 0
        for input, target in dataLoader:
            varOutput = model(input)
            losstensor = loss(varOutput, target)
            losstensorMean += losstensor  # missed: ADL023
            lossVal += losstensor.item()
            lossValNorm += 1
        outLoss = lossVal / lossValNorm
        losstensorMean = losstensorMean / lossValNorm
        return outLoss, losstensorMean


def bug_shows():
    """The validation mean returned to the scheduler holds the batches' graphs."""
    torch.manual_seed(0)
    model = DenseNet121()
    loader = [(torch.randn(4, 10), torch.rand(4, 3).round()) for _ in range(3)]
    _, losstensor = ChexnetTrainer.epochVal(model, loader, nn.BCELoss())
    return losstensor.grad_fn is not None
