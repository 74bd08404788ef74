"""GPT-J fine-tuned in 8 bits with low-rank adapters (gustavecortal/gpt-j-fine-tuning-example, the
FrozenBNBLinear layer): the frozen weights are stored quantized and a custom
`DequantizeAndLinear` autograd.Function dequantizes them and applies the linear map; its output
is a view made inside the Function, and the layer then adds the adapter's output to it in place
(`output += self.adapter(input)`). PyTorch forbids an in-place write into a view returned by a
custom Function (its backward would be overridden) and raises in the first forward.
Source: https://github.com/gustavecortal/gpt-j-fine-tuning-example/issues/1 ("Output 0 of
DequantizeAndLinearBackward is a view and is being modified inplace"; fixed by returning
`F.linear(...).clone()` from the Function's forward).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, RANK, SEQ, BATCH = 24, 16, 4, 5, 2


def quantize_rows(weight):
    absmax = weight.abs().amax(dim=1, keepdim=True)
    return torch.round(weight / absmax * 127).to(torch.int8), absmax


class DequantizeAndLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, codes, absmax):
        weight = codes.float() * absmax / 127
        ctx.save_for_backward(codes, absmax)
        flat = input.reshape(-1, input.shape[-1]) @ weight.t()
        return flat.view(*input.shape[:-1], weight.shape[0]).clone()

    @staticmethod
    def backward(ctx, grad_output):
        codes, absmax = ctx.saved_tensors
        weight = codes.float() * absmax / 127
        return grad_output @ weight, None, None


class FrozenLinearWithAdapter(nn.Module):
    def __init__(self, dim):
        super().__init__()
        codes, absmax = quantize_rows(torch.randn(dim, dim) / dim ** 0.5)
        self.register_buffer("codes", codes)
        self.register_buffer("absmax", absmax)
        self.adapter = nn.Sequential(nn.Linear(dim, RANK, bias=False), nn.Linear(RANK, dim, bias=False))
        nn.init.normal_(self.adapter[1].weight, std=0.02)

    def forward(self, input):
        output = DequantizeAndLinear.apply(input, self.codes, self.absmax)
        output += self.adapter(input)
        return output


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.embed.requires_grad_(False)
        self.embed_adapter = nn.Embedding(VOCAB, DIM)  # the embedding's trainable low-rank part
        nn.init.normal_(self.embed_adapter.weight, std=0.02)
        self.proj = FrozenLinearWithAdapter(DIM)
        self.mlp = FrozenLinearWithAdapter(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)
        self.lm_head.requires_grad_(False)

    def forward(self, tokens):
        hidden = self.embed(tokens) + self.embed_adapter(tokens)
        hidden = hidden + torch.tanh(self.proj(hidden))
        hidden = hidden + F.gelu(self.mlp(hidden))
        return self.lm_head(hidden)


model = TinyLM()
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1))

losses = []
for step in range(3):
    optimizer.zero_grad()
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
