"""torchvision's `ops.MLP` builds `Linear -> activation -> Dropout` blocks from
an `inplace` argument that defaults to `True` and is passed as keyword
arguments to both the activation and the dropout layers.  With `dropout >
0`, the in-place dropout overwrites the output of the in-place ReLU that the
ReLU keeps for backward, so `MLP(3, [3, 3], dropout=0.5)(x).sum().backward()`
fails ("output 0 of ReluBackward0, is at version 4; expected version 3").
Buggy line: `layers.append(torch.nn.Dropout(dropout, **params))` after the
in-place activation.
Expected finding: ADL001 there.
Source: https://github.com/pytorch/vision/issues/7174"""
from typing import Callable, List, Optional

import torch


class MLP(torch.nn.Sequential):
    """This block implements the multi-layer perceptron (MLP) module."""

    def __init__(
        self,
        in_channels: int,
        hidden_channels: List[int],
        norm_layer: Optional[Callable[..., torch.nn.Module]] = None,
        activation_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.ReLU,
        inplace: Optional[bool] = True,
        bias: bool = True,
        dropout: float = 0.0,
    ):
        params = {} if inplace is None else {"inplace": inplace}

        layers = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(torch.nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))
            layers.append(torch.nn.Dropout(dropout, **params))  # missed: ADL001
            in_dim = hidden_dim

        layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(torch.nn.Dropout(dropout, **params))

        super().__init__(*layers)


class RegressionHead(torch.nn.Module):
    def __init__(self, in_features=3):
        super().__init__()
        self.mlp = MLP(in_features, [8, 8, 1], dropout=0.5)

    def forward(self, x):
        return self.mlp(x).squeeze(-1)


def run():
    torch.manual_seed(0)
    head = RegressionHead()
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    x, y = torch.rand(4, 3), torch.rand(4)
    loss = torch.nn.functional.mse_loss(head(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
