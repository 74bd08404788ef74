"""A tied autoencoder: the decoder should use the transpose of the encoder's weight, and the
asker assigned it, `self.decoder[0].weight = self.encoder[0].weight.t()`. The transpose is the
output of an operation (a non-leaf view), not a Parameter, and the module refuses it: "cannot
assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)". Wrapping
it in `nn.Parameter(...)` silences the error but makes a second parameter with its own gradient,
so nothing is tied. The answer: keep one parameter and use its transpose in the forward,
`F.linear(h, self.encoder[0].weight.t(), self.decoder[0].bias)`, so both uses reach the same
parameter's gradient.
Source: https://qa.1r1g.com/sf/ask/4055050961 (a mirror of the StackOverflow question "How to
share weights between modules in Pytorch?")
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TiedAutoEncoder(nn.Module):
    def __init__(self, inp, out):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(inp, out))
        self.decoder = nn.Sequential(nn.Linear(out, inp))

    def forward(self, x):
        h = torch.relu(self.encoder(x))
        return F.linear(h, self.encoder[0].weight.t(), self.decoder[0].bias)


model = TiedAutoEncoder(20, 6)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(32, 20)

losses = []
for step in range(5):
    recon = model(data)
    loss = F.mse_loss(recon, data)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "encoder_weight": model.encoder[0].weight.detach().clone()}
