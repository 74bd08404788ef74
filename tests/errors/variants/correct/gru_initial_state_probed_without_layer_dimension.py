# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [1, 4, 5] while the given forward gradient is of size [4, 5].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 16
# trigger: a sensitivity probe of an nn.GRU to its initial hidden state with torch.autograd.forward_ad:
#   the direction is drawn as (batch, hidden), the shape of one layer's state, while nn.GRU's h0 is
#   (num_layers, batch, hidden)
# source: none found; the pattern as users write it (nn.GRU's h0 shape is a frequent stumble)
# results: final_state, sensitivity
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 5, batch_first=True)

    def forward(self, x, h0):
        _, h_n = self.gru(x, h0)
        return h_n


torch.manual_seed(0)
encoder = Encoder()
x = torch.randn(4, 7, 3)
h0 = torch.zeros(1, 4, 5)
direction = torch.randn(4, 5).unsqueeze(0)
with fwAD.dual_level():
    dual_h0 = fwAD.make_dual(h0, direction)  # PRIMARY
    final_state, sensitivity = fwAD.unpack_dual(encoder(x, dual_h0))
