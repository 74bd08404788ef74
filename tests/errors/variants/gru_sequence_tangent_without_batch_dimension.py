# message: Trying to set a forward gradient that has a different size than that of the original
#   Tensor, this is not supported.
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 21
# trigger: a sensitivity analysis of an nn.GRU takes torch.func.jvp at one sequence made a batch of
#   one with unsqueeze(0), while the direction is drawn with the sequence's own shape (steps, features)
# source: none found; the pattern as users write it
# results: out, tangent_out
import os
import sys

import torch
from torch import nn
from torch.func import jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


torch.manual_seed(0)
gru = nn.GRU(3, 4, batch_first=True)
sequence = torch.randn(6, 3)
batch = sequence.unsqueeze(0)
direction = torch.randn(6, 3)  # PRIMARY
out, tangent_out = jvp(lambda s: gru(s)[0], (batch,), (direction,))
