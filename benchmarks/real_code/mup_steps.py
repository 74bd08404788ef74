"""mup (microsoft/mup) in its own use: models given base shapes (`set_base_shapes`, which rescales
the readout's parameters through `.data`), trained with its MuAdam / MuSGD / MuAdamW (parameter
groups with learning rates scaled per width), a readout tied to the embedding (`MuSharedReadout`),
and its coordinate check (`get_coord_data`: forward hooks on every module during training).
For docs/real-code.md (fourteenth set): seeded, prints losses and checksums, to be compared line
by line between plain python and the doctor's modes. Run from the project's root (`mup`
importable); the MLP and the tied model are written in the style of its examples."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from mup import MuAdam, MuAdamW, MuReadout, MuSGD, MuSharedReadout, set_base_shapes
from mup.coord_check import get_coord_data
from mup.init import normal_


class MLP(nn.Module):
    def __init__(self, width, d_in=12, d_out=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, width)
        self.fc2 = nn.Linear(width, width)
        self.readout = MuReadout(width, d_out, readout_zero_init=False)

    def forward(self, x):
        return self.readout(F.relu(self.fc2(F.relu(self.fc1(x)))))


class TiedLM(nn.Module):
    """Embedding, one attention block with 1/d attention (muP), readout tied to the embedding."""

    def __init__(self, width, vocab=20):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.proj = nn.Linear(width, width, bias=False)
        self.norm = nn.LayerNorm(width)
        self.readout = MuSharedReadout(self.embed.weight, bias=False)

    def reinit(self, width):
        for linear in (self.qkv, self.proj):  # mup's init reads the shapes set_base_shapes gave
            normal_(linear.weight, std=width ** -0.5)

    def forward(self, tokens):
        h = self.embed(tokens)
        q, k, v = self.qkv(self.norm(h)).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / q.shape[-1]  # muP: 1/d, not 1/sqrt(d)
        mask = torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool).tril()
        attn = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        h = h + self.proj(attn @ v)
        return self.readout(h)


def checksum(model):
    return sum(float(p.detach().double().abs().sum()) for p in model.parameters())


def train_mlp(width, optimizer_name, x, y):
    torch.manual_seed(10)
    model = MLP(width)
    set_base_shapes(model, MLP(8), delta=MLP(16))
    if optimizer_name == "adam":
        optimizer = MuAdam(model.parameters(), lr=3e-3)
    elif optimizer_name == "adamw":
        optimizer = MuAdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    else:
        optimizer = MuSGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    for step in range(12):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"mlp width {width} {optimizer_name}: loss {loss.item():.8f} readout width_mult {model.readout.width_mult():.4f} checksum {checksum(model):.10f}")


def train_tied(width, tokens):
    torch.manual_seed(20)
    model = TiedLM(width)
    set_base_shapes(model, TiedLM(8), delta=TiedLM(12))
    model.reinit(width)
    optimizer = MuAdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    for step in range(10):
        optimizer.zero_grad()
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 3 == 0:
            print(f"tied width {width} step {step} loss {loss.item():.8f}")
    tied = model.readout.weight is model.embed.weight
    print(f"tied width {width}: still tied {tied} checksum {checksum(model):.10f}")


def coord_check(x, y):
    def lazy(width):
        def build():
            torch.manual_seed(30)
            model = MLP(width)
            set_base_shapes(model, MLP(8), delta=MLP(16))
            return model
        return build

    models = {w: lazy(w) for w in (16, 64)}
    loader = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 48, 16)]
    for optimizer in ("sgd", "adam"):
        df = get_coord_data(models, loader, optimizer=optimizer, lr=0.05 if optimizer == "sgd" else 3e-3,
                            nsteps=3, cuda=False, show_progress=False, nseeds=1)
        rows = df.sort_values(["width", "module", "t"])
        print(f"coord check {optimizer}: {len(rows)} records")
        for width, module, t, l1 in zip(rows["width"], rows["module"], rows["t"], rows["l1"]):
            print(f"  width {width} module {module or '(model)'} t {t} l1 {l1:.8g}")


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 12)
    y = (x[:, :4].sum(dim=1) > 0).long() + 2 * (x[:, 4] > 0).long()
    for width in (32, 128):
        for name in ("adam", "adamw", "sgd"):
            train_mlp(width, name, x, y)
    tokens = torch.randint(0, 20, (6, 9), generator=torch.Generator().manual_seed(1))
    for width in (16, 48):
        train_tied(width, tokens)
    coord_check(x, y)


if __name__ == "__main__":
    main()
