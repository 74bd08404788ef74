"""Infini-attention keeps a compressive memory `self.M` and a normaliser
`self.z` on the attention module and updates them from each segment's keys
and values.  The first version stored the updated memory as it was,
`self.M = updated_M`, so the memory carried the graph of the previous
segment into the next one; training segment by segment (one backward per
segment) fails at the second `loss.backward()` ("Trying to backward through
the graph a second time").  The fix stores `updated_M.detach()`.
Buggy line: `self.M = updated_M` in `_update_memory`.
Expected finding: ADL017 there (a state carried from call to call).
Source: https://github.com/jlamprou/Infini-Attention/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class InfiniAttention(nn.Module):
    def __init__(self, hidden_size=8, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.hidden_size = hidden_size
        self.q_proj = nn.Linear(hidden_size, hidden_size)
        self.k_proj = nn.Linear(hidden_size, hidden_size)
        self.v_proj = nn.Linear(hidden_size, hidden_size)
        self.o_proj = nn.Linear(hidden_size, hidden_size)
        self.beta = nn.Parameter(torch.randn(1))
        self.M = None
        self.z = None

    def forward(self, hidden_states):
        if self.M is None:
            self.M = torch.zeros(self.num_heads, self.head_dim, self.head_dim)
            self.z = torch.zeros(self.num_heads, self.head_dim)
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)

        memory_output = self._retrieve_from_memory(query_states)
        self._update_memory(key_states, value_states)
        attn_output = F.scaled_dot_product_attention(query_states, key_states, value_states, is_causal=True)
        combined_output = self._long_term_injection(attn_output, memory_output)
        combined_output = combined_output.transpose(1, 2).contiguous().view(bsz, q_len, self.hidden_size)
        return self.o_proj(combined_output)

    def _retrieve_from_memory(self, Q):
        M_s_1 = torch.matmul(F.elu(Q) + 1, self.M)
        Z_s_1 = torch.matmul(F.elu(Q) + 1, self.z.unsqueeze(-1)) + 1e-8
        return M_s_1 / Z_s_1

    def _update_memory(self, K, V):
        updated_M = self.M + torch.matmul(F.elu(K).transpose(-2, -1) + 1, V)
        updated_z = self.z + (F.elu(K) + 1).sum(dim=-2)
        self.M = updated_M  # missed: ADL017
        self.z = updated_z

    def _long_term_injection(self, A_dot, A_mem):
        beta = torch.sigmoid(self.beta)
        return beta * A_mem + (1 - beta) * A_dot


def train_on_segments(model, optimizer, segments, targets):
    for segment, target in zip(segments, targets):
        loss = F.mse_loss(model(segment), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = InfiniAttention()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    segments = torch.randn(3, 1, 4, 8).unbind(0)
    targets = torch.randn(3, 1, 4, 8).unbind(0)
    train_on_segments(model, optimizer, segments, targets)
