"""Voice conversion GAN: the feature-matching loss detaches the whole difference
`(fake - real).abs().detach()` instead of only the real features, so the term adds a constant to the
generator's loss and trains nothing (no error).
Source: https://github.com/yuval-reshef/StreamVC/issues/3 (fix: detach only `real`).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 6))
disc_layers = nn.ModuleList([nn.Linear(6, 8), nn.Linear(8, 8), nn.Linear(8, 1)])
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
source, real_audio = torch.randn(4, 6), torch.randn(4, 6)


def features(x):
    feats = []
    for layer in disc_layers:
        x = torch.tanh(layer(x))
        feats.append(x)
    return feats


fake_audio = generator(source)
fake_feats, real_feats = features(fake_audio), features(real_audio)
adversarial_loss = (1 - fake_feats[-1]).pow(2).mean()
feature_loss = torch.tensor(0.0)
for fake, real in zip(fake_feats[:-1], real_feats[:-1]):
    feature_loss = feature_loss + torch.abs(fake - real).detach().mean()
loss = adversarial_loss + 2.0 * feature_loss
optimizer.zero_grad()
loss.backward()
optimizer.step()
result = {"loss": loss.detach(), "params": [p.detach() for p in generator.parameters()]}
