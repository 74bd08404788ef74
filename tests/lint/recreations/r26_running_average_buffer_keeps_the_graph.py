"""StyleGAN's truncation trick: in training, forward() updates a running average
of the mapped latents, a registered buffer, from this forward's mapping output
without `.detach()`, then mixes the average into the latents.  The buffer keeps
the graph of the forward before: the next backward goes through it, whose saved
tensors the earlier backward freed (found on held-out set E; on one device, where
the assignment is kept).
Source: https://github.com/facebookresearch/pytorch_GAN_zoo/blob/b75dee40918caabb4fe7ec561522717bf096a8cb/models/networks/styleGAN.py#L155-L161"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.2), nn.Linear(4, 4))
        self.synthesis = nn.Linear(4, 6)
        self.register_buffer("mean_w", torch.zeros(1, 4))

    def forward(self, z):
        w = self.mapping(z)
        if self.training:
            self.mean_w = 0.99 * self.mean_w + 0.01 * w.mean(dim=0, keepdim=True)  # expect: ADL017
        w = self.mean_w + 0.7 * (w - self.mean_w)
        return self.synthesis(w)


def run():
    generator = Generator()
    optimizer = torch.optim.Adam(generator.parameters())
    for _ in range(2):
        optimizer.zero_grad()
        loss = generator(torch.randn(8, 4)).pow(2).mean()
        loss.backward()  # the second one fails: "backward through the graph a second time"
        optimizer.step()
