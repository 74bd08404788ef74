"""A transformer feed-forward block `g = g + dropout2(linear2(dropout(activation(linear1(g)))))`
whose dropout runs in place on the ReLU's output, which the ReLU's backward needs.
Source: https://github.com/qianyu-dlut/MVANet/issues/2 (fix: `self.activation(...).clone()` before
the dropout).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(0.1, inplace=True)
        self.dropout2 = nn.Dropout(0.1)

    def forward(self, g):
        g = g + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(g)))))
        return g


block = FeedForward(8, 16)
tokens, target = torch.randn(3, 5, 8), torch.randn(3, 5, 8)
loss = (block(tokens) - target).pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in block.parameters()]}
