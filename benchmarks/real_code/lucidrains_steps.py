"""A small attention model trained for a few steps with lucidrains' rotary-embedding-torch (rotary
queries and keys, learned frequencies, xpos scaling, cached frequencies) and ema-pytorch (EMA with
warm-up and a post-step optimizer hook, PostHocEMA with checkpoints and a synthesized EMA).
Imports both libraries from where the user installed them; prints losses and checksums."""
import sys, tempfile, torch
from torch import nn
from rotary_embedding_torch import RotaryEmbedding
from ema_pytorch import EMA, PostHocEMA


class Attention(nn.Module):
    def __init__(self, dim, heads, rotary):
        super().__init__()
        self.heads, self.rotary = heads, rotary
        self.to_qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if self.rotary.use_xpos:
            q, k = self.rotary.rotate_queries_and_keys(q, k)
        else:
            q, k = self.rotary.rotate_queries_or_keys(q), self.rotary.rotate_queries_or_keys(k)
        attn = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.out(attn.transpose(1, 2).reshape(b, n, d))


def make_model(use_xpos, learned_freq):
    rotary = RotaryEmbedding(dim=8, use_xpos=use_xpos, learned_freq=learned_freq)
    return nn.Sequential(nn.Embedding(50, 32), Attention(32, 4, rotary), nn.LayerNorm(32),
                         Attention(32, 4, rotary), nn.Linear(32, 50))


def checksum(module):
    return sum(p.double().sum().item() for p in module.parameters())


for use_xpos, learned_freq in [(False, False), (False, True), (True, False)]:
    torch.manual_seed(0)
    model = make_model(use_xpos, learned_freq)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    # a model with xpos holds a staticmethod, which deepcopy cannot copy: the EMA copies are made fresh
    fresh = lambda: make_model(use_xpos, learned_freq)
    ema = EMA(model, ema_model=fresh, beta=0.9, update_after_step=2, update_every=1)
    with tempfile.TemporaryDirectory() as folder:
        post_hoc = PostHocEMA(model, ema_model=fresh, sigma_rels=(0.05, 0.28), update_every=1,
                              checkpoint_every_num_steps=3, checkpoint_folder=folder)
        for step in range(8):
            tokens = torch.randint(0, 50, (4, 16))
            logits = model(tokens[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, 50), tokens[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            ema.update()
            post_hoc.update()
            with torch.no_grad():
                ema_loss = nn.functional.cross_entropy(ema(tokens[:, :-1]).reshape(-1, 50), tokens[:, 1:].reshape(-1))
            print(f'xpos={use_xpos} learned={learned_freq} step {step} loss {loss.item():.8f} ema loss {ema_loss.item():.8f}')
        synthesized = post_hoc.synthesize_ema_model(sigma_rel=0.15)
        print('model', f'{checksum(model):.10f}', 'ema', f'{checksum(ema.ema_model):.10f}',
              'synthesized', f'{checksum(synthesized.ema_model):.10f}')
        # the EMA weights copied back into the online model, then one more step from there
        ema.copy_params_from_ema_to_model()
        loss = model(tokens[:, :-1]).logsumexp(-1).mean()
        loss.backward()
        print('after copy back', f'{loss.item():.8f}', f'{sum(p.grad.double().sum().item() for p in model.parameters() if p.grad is not None):.10f}')
