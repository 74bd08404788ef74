"""Multimodal neural machine translation (Eurus-Holmes/MNMT): the decoder starts from the encoder's
last hidden state, taken as `encoder_hidden[-1]`, and cuts the gradient of that path with
`detach_()` so that the encoder learns through the attention only. `encoder_hidden[-1]` is a view
of the encoder's state, and PyTorch refuses: "Can't detach views in-place. Use detach() instead."
Source: https://github.com/Eurus-Holmes/MNMT/issues/6 ("RuntimeError: Can't detach views in-place.
Use detach() instead"; the fix is the out-of-place `detach()`, bound to the name the decoder uses).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, EMBED, HIDDEN, IMAGE = 12, 8, 10, 6


class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embed = nn.Embedding(VOCAB, EMBED)
        self.tgt_embed = nn.Embedding(VOCAB, EMBED)
        self.encoder = nn.GRU(EMBED, HIDDEN, num_layers=2, batch_first=True)
        self.image_proj = nn.Linear(IMAGE, HIDDEN)
        self.decoder = nn.GRUCell(EMBED + HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, src, image, tgt_in):
        annotations, encoder_hidden = self.encoder(self.src_embed(src))
        annotations = annotations + self.image_proj(image).unsqueeze(1)
        state = encoder_hidden[-1]
        state.detach_()
        logits = []
        for t in range(tgt_in.shape[1]):
            scores = torch.einsum("bh,bsh->bs", state, annotations)
            context = torch.einsum("bs,bsh->bh", scores.softmax(-1), annotations)
            state = self.decoder(torch.cat([self.tgt_embed(tgt_in[:, t]), context], -1), state)
            logits.append(self.out(state))
        return torch.stack(logits, 1)


model = Translator()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
src = torch.randint(0, VOCAB, (3, 5))
image = torch.randn(3, IMAGE)
tgt = torch.randint(0, VOCAB, (3, 5))

losses = []
for step in range(3):
    optimizer.zero_grad()
    logits = model(src, image, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
