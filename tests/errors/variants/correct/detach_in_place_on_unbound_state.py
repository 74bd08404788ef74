# message: Can't detach views in-place. Use detach() instead.
# code: AD108 (catalogue: detach_view_inplace)
# set: 2
# trigger: a recurrent model's per-layer states come from unbind(0); each is detached in place in
#   a loop over the list before the next batch
# source: none found; the pattern as users write it
# results: states, rnn
import torch
from torch import nn

torch.manual_seed(0)
rnn = nn.GRU(3, 4, num_layers=2)
_, h_n = rnn(torch.randn(5, 2, 3))
h_n.sum().backward()
states = list(h_n.unbind(0))
for i in range(len(states)):
    states[i] = states[i].detach()  # PRIMARY
