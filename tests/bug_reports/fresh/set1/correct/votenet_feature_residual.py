"""3D detection proposal refinement: `net += original_feature` on a ReLU's output, which the
ReLU saved.
Source: https://github.com/zaiweizhang/H3DNet/issues/29 (fix: `net = net + original_feature`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
conv1 = nn.Conv1d(6, 6, 1)
conv2 = nn.Conv1d(6, 3, 1)
features = torch.randn(2, 6, 10)

original_feature = features * 0.5
net = torch.relu(conv1(features))
net = net + original_feature
net = conv2(net)
loss = net.pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in (*conv1.parameters(), *conv2.parameters())]}
