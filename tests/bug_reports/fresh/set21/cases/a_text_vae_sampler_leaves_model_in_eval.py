"""Training the discriminator of a controlled-text-generation VAE (wiseodd/controlled-text-generation,
`train_discriminator.py`): every iteration first generates sentences with the model's own sampling
helper, and that helper calls `model.eval()` to sample and never calls `model.train()` again. The
rest of the iteration, the losses and backward() included, runs with the model left in eval mode.
On the reporter's GPU the cuDNN LSTM refused ("cudnn RNN backward can only be called in training
mode"); on the CPU nothing is raised and the training silently runs without its dropout. The
accepted answer puts the model back in training mode after the sampling.
Source: https://github.com/wiseodd/controlled-text-generation/issues/24 ("when running
train_discriminator.py, occuring cudnn RNN backward can only be called in training mode").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, EMB, HIDDEN, SEQ, BATCH = 12, 8, 16, 5, 4


class TextVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.encoder = nn.LSTM(EMB, HIDDEN, batch_first=True)
        self.to_z = nn.Linear(HIDDEN, HIDDEN)
        self.decoder = nn.LSTM(EMB + HIDDEN, HIDDEN, batch_first=True)
        self.word_dropout = nn.Dropout(0.3)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def decode(self, tokens, z):
        emb = self.word_dropout(self.embed(tokens))
        z_seq = z.unsqueeze(1).expand(-1, tokens.shape[1], -1)
        hidden, _ = self.decoder(torch.cat([emb, z_seq], dim=-1))
        return self.out(hidden)

    def forward(self, tokens):
        _, (h, _) = self.encoder(self.embed(tokens))
        z = self.to_z(h[-1])
        return self.decode(tokens, z)

    def sample_sentence(self, z):
        self.eval()  # sampling is deterministic in eval mode
        tokens = torch.zeros(z.shape[0], 1, dtype=torch.long)
        with torch.no_grad():
            for _ in range(SEQ - 1):
                logits = self.decode(tokens, z)
                tokens = torch.cat([tokens, logits[:, -1:].argmax(-1)], dim=1)
        return tokens


model = TextVAE()
discriminator = nn.Sequential(nn.Embedding(VOCAB, EMB), nn.Flatten(), nn.Linear(EMB * SEQ, 1))
optimizer = torch.optim.Adam(list(model.parameters()) + list(discriminator.parameters()), lr=1e-2)
real = torch.randint(0, VOCAB, (BATCH, SEQ))

losses = []
for it in range(4):
    fake = model.sample_sentence(torch.randn(BATCH, HIDDEN))
    logits = model(real)
    reconstruction = F.cross_entropy(logits.reshape(-1, VOCAB), real.reshape(-1))
    d_loss = F.binary_cross_entropy_with_logits(discriminator(real), torch.ones(BATCH, 1)) + \
        F.binary_cross_entropy_with_logits(discriminator(fake), torch.zeros(BATCH, 1))
    loss = reconstruction + d_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
