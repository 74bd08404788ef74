"""GE2E speaker encoder (Real-Time-Voice-Cloning): the similarity matrix's learned scale and bias
are created as `nn.Parameter(torch.tensor([10.])).to(loss_device)`. The `.to()` comes after
`nn.Parameter`, so when it has to copy (the loss runs on another device; re-created here on CPU
with the loss's dtype, float64, which copies the same way) the attribute is a plain non-leaf
tensor: it is not registered as a parameter, its `.grad` stays None, and the gradient scaling
`self.similarity_weight.grad *= 0.01` raises "TypeError: unsupported operand type(s) for *=:
'NoneType' and 'float'".
Source: https://github.com/CorentinJ/Real-Time-Voice-Cloning/issues/237 ("Fixed the None grad of
the encoder on GPU": move the tensor before wrapping it, `nn.Parameter(torch.tensor([10.]).to(
loss_device))`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)
loss_dtype = torch.float64


class SpeakerEncoder(nn.Module):
    def __init__(self, mel_channels=8, embedding_size=6):
        super().__init__()
        self.linear = nn.Linear(mel_channels, embedding_size)
        self.similarity_weight = nn.Parameter(torch.tensor([10.0])).to(loss_dtype)
        self.similarity_bias = nn.Parameter(torch.tensor([-5.0])).to(loss_dtype)

    def do_gradient_ops(self):
        self.similarity_weight.grad *= 0.01
        self.similarity_bias.grad *= 0.01
        clip_grad_norm_(self.parameters(), 3, norm_type=2)

    def forward(self, utterances):
        return F.normalize(torch.relu(self.linear(utterances)).mean(dim=-2), dim=-1)

    def loss(self, embeds):
        speakers, utterances = embeds.shape[:2]
        centroids = F.normalize(embeds.mean(dim=1), dim=-1)
        sim = torch.einsum("sud,kd->suk", embeds.to(loss_dtype), centroids.to(loss_dtype))
        sim = sim * self.similarity_weight + self.similarity_bias
        target = torch.arange(speakers).repeat_interleave(utterances)
        return F.cross_entropy(sim.reshape(speakers * utterances, speakers), target)


model = SpeakerEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [torch.randn(3, 4, 10, 8) + torch.arange(3.0).view(3, 1, 1, 1) for _ in range(3)]
losses = []
for speaker_batch in batches:
    embeds = model(speaker_batch)
    loss = model.loss(embeds)
    model.zero_grad()
    loss.backward()
    model.do_gradient_ops()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
