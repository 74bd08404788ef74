"""SalEMA (video saliency with an exponential moving average inside a SalGAN
encoder-decoder) learns the EMA's mixing weight `alpha`.  The model makes it
a Parameter and then moves it, so the attribute holds the copy: training
printed "Initial alpha set to: tensor([0.2500], device='cuda:0',
grad_fn=<CopyBackwards>)" and the optimizer
`torch.optim.Adam([{'params': model.salgan.parameters(), ...}, {'params':
model.alpha, 'lr': 0.1}])` raised "ValueError: can't optimize a non-leaf
Tensor".  Re-created as the model (encoder, EMA over frames with `alpha`,
decoder) and the optimizer set-up of train.py; the move goes to the model's
device and dtype (float64 here), so on the CPU `.to()` copies as the CUDA
move did.
Buggy line: `self.alpha = nn.Parameter(torch.Tensor([alpha])).to(device, dtype)`.
Source: https://github.com/Linardos/SalEMA/issues/7"""
import torch
import torch.nn as nn


class SalEMA(nn.Module):
    def __init__(self, alpha=0.25, device="cpu", dtype=torch.float64):
        super().__init__()
        self.salgan = nn.ModuleDict({
            "encoder": nn.Conv2d(3, 8, 3, 1, 1),
            "decoder": nn.Conv2d(8, 1, 3, 1, 1),
        }).to(device, dtype)
        self.alpha = nn.Parameter(torch.Tensor([alpha])).to(device, dtype)  # missed: ADL020
        print("Initial alpha set to: {}".format(self.alpha))

    def forward(self, frames, prev_state=None):
        features = torch.relu(self.salgan["encoder"](frames))
        if prev_state is None:
            state = features
        else:
            state = torch.sigmoid(self.alpha) * features + (1 - torch.sigmoid(self.alpha)) * prev_state
        return torch.sigmoid(self.salgan["decoder"](state)), state


def run():
    torch.manual_seed(0)
    model = SalEMA()
    optimizer = torch.optim.Adam([{'params': model.salgan.parameters(), 'lr': 1e-5, 'weight_decay': 1e-4},
                                  {'params': model.alpha, 'lr': 0.1}])
    clip = torch.randn(3, 1, 3, 8, 8, dtype=torch.float64)
    state = None
    loss = 0
    for frame in clip:
        saliency, state = model(frame, state)
        loss = loss + saliency.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
