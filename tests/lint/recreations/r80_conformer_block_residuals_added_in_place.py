"""A conformer block (Granite Speech encoder) rewritten to "prefer in-place
add": `hidden_states += 0.5 * self.ff1(hidden_states)`, then the attention,
convolution and second feed-forward module the same way.  Each module keeps
`hidden_states` for its backward (the layer norm and the first linear layer),
and the `+=` overwrites it: training fails ("modified by an inplace
operation"), as the review of the change pointed out.
Source: https://github.com/vllm-project/vllm/pull/24500"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConformerFeedForward(nn.Module):
    def __init__(self, dim, mult=2):
        super().__init__()
        self.pre_norm = nn.LayerNorm(dim)
        self.up_proj = nn.Linear(dim, dim * mult)
        self.down_proj = nn.Linear(dim * mult, dim)

    def forward(self, hidden_states):
        hidden_states = self.pre_norm(hidden_states)
        return self.down_proj(F.silu(self.up_proj(hidden_states)))


class ConformerAttention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.pre_norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, hidden_states, attention_dists=None):
        hidden_states = self.pre_norm(hidden_states)
        out, _ = self.attn(hidden_states, hidden_states, hidden_states, need_weights=False)
        return out


class ConformerConvModule(nn.Module):
    def __init__(self, dim, kernel_size=3):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.depth_conv = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2, groups=dim)

    def forward(self, hidden_states):
        hidden_states = self.norm(hidden_states).transpose(1, 2)
        return F.silu(self.depth_conv(hidden_states)).transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.ff1 = ConformerFeedForward(dim)
        self.attn = ConformerAttention(dim)
        self.conv = ConformerConvModule(dim)
        self.ff2 = ConformerFeedForward(dim)
        self.post_norm = nn.LayerNorm(dim)

    def forward(self, hidden_states, attention_dists=None):
        hidden_states += 0.5 * self.ff1(hidden_states)  # expect: ADL001
        hidden_states += self.attn(hidden_states, attention_dists=attention_dists)  # expect: ADL001
        hidden_states += self.conv(hidden_states)  # expect: ADL001
        hidden_states += 0.5 * self.ff2(hidden_states)  # expect: ADL001
        return self.post_norm(hidden_states)


class CTCEncoder(nn.Module):
    def __init__(self, input_dim=5, dim=8, num_layers=2, vocab=6):
        super().__init__()
        self.input_linear = nn.Linear(input_dim, dim)
        self.layers = nn.ModuleList([ConformerBlock(dim) for _ in range(num_layers)])
        self.out = nn.Linear(dim, vocab)

    def forward(self, features):
        hidden_states = self.input_linear(features)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.out(hidden_states)


def run():
    torch.manual_seed(0)
    encoder = CTCEncoder()
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-4)
    log_probs = encoder(torch.randn(2, 7, 5)).log_softmax(-1).transpose(0, 1)
    loss = F.ctc_loss(log_probs, torch.randint(1, 6, (2, 3)), torch.tensor([7, 7]), torch.tensor([3, 3]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
