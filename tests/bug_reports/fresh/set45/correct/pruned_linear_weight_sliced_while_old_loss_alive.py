"""Pruning a linear layer by hand: after one backward pass the last ten input columns are cut off,
`layer.weight.data = layer.weight.data[:, :90]` (and the same for its `.grad`), and the pruned layer
is run and back-propagated again on 90 inputs. The second backward() fails with "Function
TBackward0 returned an invalid gradient at index 0 - got [10, 90] but expected shape compatible
with [10, 100]": the first loss `x` is still alive, so the weight's gradient accumulator of the
first graph (which recorded the 100-column shape) is reused by the second graph. The thread's
first workaround, the one that keeps the pruned gradient the user sliced: `del x` before pruning
(its other one, re-wrapping the weight in a new `nn.Parameter`, drops that gradient).
Source: https://discuss.pytorch.org/t/pruning-nn-linear-weights-causing-unexpected-errors/196779
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def prune_and_retrain(keep_columns):
    layer = nn.Linear(100, 10)
    x = 5 - torch.sum(layer(torch.ones(100)))
    x.backward()
    del x
    layer.weight.data = layer.weight.data[:, :keep_columns]
    layer.weight.grad.data = layer.weight.grad.data[:, :keep_columns]
    x = 5 - torch.sum(layer(torch.ones(keep_columns)))
    x.backward()
    return layer


layer = prune_and_retrain(90)
result = {"weight": layer.weight.detach().clone(), "weight_grad": layer.weight.grad.clone(),
          "bias_grad": layer.bias.grad.clone()}
