"""Flamingo vision-language model (lucidrains/flamingo-pytorch, `MaskedCrossAttention`): text
tokens that come before the first image must not attend to any image, so after the softmax their
attention rows are zeroed with `attn.masked_fill(text_without_media_mask, 0.)`. masked_fill is the
out-of-place method and its result is thrown away: those tokens keep a uniform attention over all
the images' latents (every score was masked to the same value), the model mixes image features into
text that has seen no image, and the language-model loss trains the cross-attention on them. No
error, no warning.
Source: https://github.com/lucidrains/flamingo-pytorch/issues/10 ("you are not using the inplace
version of the function ... so I think this line does not have an effect"; fixed in commit 10913ab:
`attn = attn.masked_fill(text_without_media_mask, 0.)`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, HEADS, DIM_HEAD, LATENTS, BATCH, TEXT_LEN, MEDIA = 30, 16, 2, 8, 3, 2, 8, 2
MEDIA_TOKEN = 1


class MaskedCrossAttention(nn.Module):
    def __init__(self):
        super().__init__()
        inner = HEADS * DIM_HEAD
        self.scale = DIM_HEAD ** -0.5
        self.norm = nn.LayerNorm(DIM)
        self.to_q = nn.Linear(DIM, inner, bias=False)
        self.to_kv = nn.Linear(DIM, 2 * inner, bias=False)
        self.to_out = nn.Linear(inner, DIM, bias=False)

    def split_heads(self, x):
        return x.reshape(x.shape[0], x.shape[1], HEADS, DIM_HEAD).transpose(1, 2)

    def forward(self, x, media, media_locations):
        b, t, m = media.shape[:3]
        x = self.norm(x)
        q = self.split_heads(self.to_q(x)) * self.scale
        k, v = self.to_kv(media.reshape(b, t * m, DIM)).chunk(2, dim=-1)
        k, v = self.split_heads(k), self.split_heads(v)
        sim = q @ k.transpose(-1, -2)

        # Each text token attends only to the latents of the image that most recently precedes it.
        text_time = media_locations.cumsum(dim=-1)
        media_time = torch.arange(t) + 1
        text_to_media_mask = text_time[:, None, :, None] == media_time.repeat_interleave(m)[None, None, None, :]
        sim = sim.masked_fill(~text_to_media_mask, -torch.finfo(sim.dtype).max)
        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)

        # Text before the first image attends to nothing.
        text_without_media_mask = (text_time == 0)[:, None, :, None]
        attn.masked_fill(text_without_media_mask, 0.)

        out = (attn @ v).transpose(1, 2).reshape(b, x.shape[1], HEADS * DIM_HEAD)
        return self.to_out(out)


class GatedCrossAttentionLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.cross_attn = MaskedCrossAttention()
        self.attn_gate = nn.Parameter(torch.tensor([0.5]))
        self.to_logits = nn.Linear(DIM, VOCAB)

    def forward(self, text, media):
        x = self.embed(text)
        x = x + self.cross_attn(x, media, media_locations=text == MEDIA_TOKEN) * self.attn_gate.tanh()
        return self.to_logits(x)


model = GatedCrossAttentionLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
text = torch.randint(2, VOCAB, (BATCH, TEXT_LEN + 1))
text[:, 3] = MEDIA_TOKEN  # the first image comes after three text tokens
text[:, 6] = MEDIA_TOKEN
media = torch.randn(BATCH, MEDIA, LATENTS, DIM)  # the perceiver's latents for each image

losses = []
for step in range(3):
    optimizer.zero_grad()
    logits = model(text[:, :-1], media)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), text[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
