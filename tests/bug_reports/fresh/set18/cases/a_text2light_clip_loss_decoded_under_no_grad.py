"""Text-driven HDR panorama generation (FrozenBurning/Text2Light, taming/models/global_sampler.py):
besides its token loss, the global sampler is trained with a contrastive loss between the CLIP
embedding of the panorama it decodes and the text's embedding. The decoding was left inside the
`with torch.no_grad():` block that computes the frozen CLIP embedding (a line marked "#hack"), so
the contrastive term carries no graph and trains nothing; only the token loss trains. Nothing is
raised.
Source: https://github.com/FrozenBurning/Text2Light/issues/10 ("the contrastive loss have no
gradient on the network"; the maintainer removed the #hack line from the no_grad block so that the
gradient flows back to the sampler, with CLIP kept frozen).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CODES, DIM, TOKENS, EMBED = 6, 4, 5, 8


class GlobalSampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.prior = nn.Linear(EMBED, TOKENS * CODES)
        self.codebook = nn.Parameter(torch.randn(CODES, DIM))

    def forward(self, text_emb):
        return self.prior(text_emb).view(-1, TOKENS, CODES)

    def decode_to_img(self, logits):
        return logits.softmax(-1) @ self.codebook  # soft code lookup: [batch, tokens, dim]


sampler = GlobalSampler()
clip_image = nn.Linear(TOKENS * DIM, EMBED)  # stands for CLIP's frozen image encoder
clip_image.requires_grad_(False)
optimizer = torch.optim.Adam(sampler.parameters(), lr=1e-2)

text_emb = F.normalize(torch.randn(4, EMBED), dim=-1)
target_tokens = torch.randint(0, CODES, (4, TOKENS))

losses = []
for step in range(4):
    optimizer.zero_grad()
    logits = sampler(text_emb)
    token_loss = F.cross_entropy(logits.reshape(-1, CODES), target_tokens.reshape(-1))
    with torch.no_grad():
        panorama = sampler.decode_to_img(logits)  # hack
        gen_img_emb = F.normalize(clip_image(panorama.flatten(1)), dim=-1)
    sim = gen_img_emb @ text_emb.T / 0.1
    contrastive_loss = F.cross_entropy(sim, torch.arange(4))
    loss = token_loss + 0.5 * contrastive_loss
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in sampler.parameters()]}
