"""Fine-tuning ESM-2 with LoRA on a 4-bit quantized base: the word-embedding lookup goes through
bitsandbytes' MatMul4Bit custom Function, whose output is a view of a tensor made inside the
Function. ESM's embeddings then apply token dropout in place,
`embeddings.masked_fill_((input_ids == mask_token_id).unsqueeze(-1), 0.0)`, and the forward fails
with "Output 0 of MatMul4BitBackward is a view and is being modified inplace. This view was created
inside a custom Function ...". The merged fix replaces the in-place masked_fill_ by the out-of-place
`embeddings = embeddings.masked_fill(...)`.
Source: https://github.com/huggingface/transformers/pull/26454
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def quantize_4bit(weight):
    scale = weight.abs().amax(dim=1, keepdim=True) / 7
    return torch.clamp(torch.round(weight / scale), -8, 7).to(torch.int8), scale


class MatMul4Bit(torch.autograd.Function):
    """Frozen 4-bit weight: dequantize, multiply, hand back the rows in the caller's shape."""

    @staticmethod
    def forward(ctx, A, qweight, scale):
        weight = qweight.float() * scale
        ctx.save_for_backward(qweight, scale)
        out = A.reshape(-1, A.shape[-1]) @ weight
        return out.view(*A.shape[:-1], weight.shape[1])

    @staticmethod
    def backward(ctx, grad_out):
        qweight, scale = ctx.saved_tensors
        weight = qweight.float() * scale
        return grad_out @ weight.t(), None, None


class QuantEmbedding(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        qweight, scale = quantize_4bit(torch.randn(vocab, dim) * 0.5)
        self.register_buffer("qweight", qweight)
        self.register_buffer("scale", scale)
        self.vocab = vocab

    def forward(self, ids):
        one_hot = F.one_hot(ids, self.vocab).float().requires_grad_()
        return MatMul4Bit.apply(one_hot, self.qweight, self.scale)


class LoRALinear(nn.Module):
    def __init__(self, dim, rank=4):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.base.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.randn(rank, dim) * 0.1)
        self.lora_B = nn.Parameter(torch.zeros(dim, rank))

    def forward(self, x):
        return self.base(x) + x @ self.lora_A.t() @ self.lora_B.t()


class EsmEmbeddings(nn.Module):
    def __init__(self, vocab=33, dim=16, mask_token_id=32, token_dropout=True):
        super().__init__()
        self.word_embeddings = QuantEmbedding(vocab, dim)
        self.mask_token_id = mask_token_id
        self.token_dropout = token_dropout

    def forward(self, input_ids, attention_mask):
        embeddings = self.word_embeddings(input_ids)
        if self.token_dropout:
            embeddings.masked_fill_((input_ids == self.mask_token_id).unsqueeze(-1), 0.0)
            mask_ratio_train = 0.15 * 0.8
            src_lengths = attention_mask.sum(-1)
            mask_ratio_observed = (input_ids == self.mask_token_id).sum(-1).float() / src_lengths
            embeddings = (embeddings * (1 - mask_ratio_train) / (1 - mask_ratio_observed)[:, None, None])
        return embeddings * attention_mask.unsqueeze(-1)


class EsmForSequenceRegression(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.embeddings = EsmEmbeddings(dim=dim)
        self.attn_q = LoRALinear(dim)
        self.attn_v = LoRALinear(dim)
        self.regressor = nn.Linear(dim, 1)

    def forward(self, input_ids, attention_mask):
        h = self.embeddings(input_ids, attention_mask)
        scores = self.attn_q(h) @ h.transpose(1, 2) / 4.0
        scores = scores.masked_fill(attention_mask[:, None, :] == 0, -1e4)
        h = h + scores.softmax(-1) @ self.attn_v(h)
        pooled = (h * attention_mask.unsqueeze(-1)).sum(1) / attention_mask.sum(1, keepdim=True)
        return self.regressor(pooled).squeeze(-1)


model = EsmForSequenceRegression()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
losses = []
for step in range(3):
    input_ids = torch.randint(4, 30, (4, 10))
    input_ids[:, 3] = 32
    attention_mask = torch.ones(4, 10)
    attention_mask[0, 8:] = 0
    target = torch.randn(4)
    loss = F.mse_loss(model(input_ids, attention_mask), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in model.parameters() if p.requires_grad]}
