# message: Mismatch in shape: grad_output[0] has a shape of torch.Size([6]) and output[0] has a shape of torch.Size([6, 1]).
# code: AD123 (catalogue: grad_outputs_shape)
# trigger: a WGAN-GP gradient penalty in another file (lib_losses.py) passes
#   grad_outputs=torch.ones(batch) for critic scores of shape [batch, 1]
# source: https://github.com/chenyuntc/pytorch-GAN/issues/4
# helpers: lib_losses.py
# results: penalty, critic
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_losses import gradient_penalty  # noqa: E402

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
real, fake = torch.randn(6, 2), torch.randn(6, 2)
penalty = gradient_penalty(critic, real, fake)
(10 * penalty).backward()
