import copy, math, torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)
class Attn(nn.Module):
    def __init__(self, d, h):
        super().__init__(); self.h = h; self.qkv = nn.Linear(d, 3 * d); self.o = nn.Linear(d, d); self.drop = nn.Dropout(0.1)
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        q = q * (1.0 / math.sqrt(D // self.h))
        att = q @ k.transpose(-2, -1)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        att.masked_fill_(mask, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        return self.o(y)
class Block(nn.Module):
    def __init__(self, d):
        super().__init__(); self.ln1 = nn.LayerNorm(d); self.attn = Attn(d, 4); self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x
class GPT(nn.Module):
    def __init__(self, vocab=50, d=32, n=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d); self.pos = nn.Parameter(torch.zeros(1, 16, d))
        self.blocks = nn.ModuleList(Block(d) for _ in range(n)); self.ln = nn.LayerNorm(d); self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.emb.weight
        self.apply(self._init)
    def _init(self, m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None: m.bias.data.zero_()
    def forward(self, idx, use_ckpt=False):
        x = self.emb(idx) + self.pos[:, : idx.shape[1]]
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=False) if use_ckpt else b(x)
        return self.head(self.ln(x))
model = GPT()
ema = copy.deepcopy(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, 2)
history = []
for step in range(4):
    idx = torch.randint(0, 50, (4, 16))
    logits = model(idx, use_ckpt=step % 2 == 1)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 50), idx[:, 1:].reshape(-1), label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step(); sched.step()
    with torch.no_grad():
        for pe, p in zip(ema.parameters(), model.parameters()):
            pe.mul_(0.99).add_(p.detach(), alpha=0.01)
    history.append(loss.item())
    preds = logits.detach()
    preds.clamp_(-10, 10)
model.eval()
with torch.no_grad():
    out = model(torch.randint(0, 50, (1, 8)))
    out[:, -1, :].div_(0.8)
    probs = F.softmax(out[:, -1, :], dim=-1)
    nxt = torch.multinomial(probs, 1)
print("ok", history)
