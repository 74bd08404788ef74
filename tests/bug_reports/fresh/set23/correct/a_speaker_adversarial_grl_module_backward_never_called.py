"""Speaker-adversarial training of a text-to-speech encoder (hash2430/pitchtron,
`speaker_classifier.py`): a speaker classifier reads the encoder outputs through a gradient
reversal layer, so that the encoder learns to *remove* speaker information. The reversal layer was
written as an `nn.Module` whose `forward` returns its input and which defines a `backward` method
returning `-grad_output`. Autograd never calls a module's `backward` method, so the layer is the
identity in both directions: the encoder is trained to *help* the speaker classifier. No error.
The reporter found the method is never called; the maintainer's fix (commit ec37300, "GRL
implementation fixed") turned the layer into a `torch.autograd.Function` applied with `.apply`.
The hand-written version reverses the gradient as the original code meant (the reporter checked it
against pytorch-revgrad).
Source: https://github.com/hash2430/pitchtron/issues/3
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, MEL, SPEAKERS, T = 12, 16, 8, 3, 5


class GradientReversalLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -1 * grad_output


def gradient_reversal_layer(x):
    grl = GradientReversalLayer.apply
    return grl(x)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, tokens):
        return torch.tanh(self.proj(self.embed(tokens)))


encoder = Encoder()
decoder = nn.Linear(DIM, MEL)
speaker_classifier = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, SPEAKERS))
params = list(encoder.parameters()) + list(decoder.parameters()) + list(speaker_classifier.parameters())
optimizer = torch.optim.Adam(params, lr=1e-2)

tokens = torch.randint(0, VOCAB, (6, T))
mels = torch.randn(6, T, MEL)
speakers = torch.randint(0, SPEAKERS, (6,))

losses = []
for step in range(6):
    optimizer.zero_grad()
    hidden = encoder(tokens)
    mel_loss = F.l1_loss(decoder(hidden), mels)
    speaker_logits = speaker_classifier(gradient_reversal_layer(hidden).mean(dim=1))
    speaker_loss = F.cross_entropy(speaker_logits, speakers)
    loss = mel_loss + 0.5 * speaker_loss
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in params]}
