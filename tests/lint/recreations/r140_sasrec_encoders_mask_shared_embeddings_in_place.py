"""FedDCSR (federated cross-domain sequential recommendation): a
disentangled model runs two self-attention encoders, one for the
domain-shared and one for the domain-exclusive part, on the same item
embeddings.  Each encoder's `forward` masks the padding positions of the
sequence it is given in place, `seqs *= ~timeline_mask.unsqueeze(-1)`.  The
first encoder's layer norm kept (a transposed view of) the embeddings for
backward; the second encoder's write changes them, and `loss.backward()`
fails ("Error detected in NativeLayerNormBackward0 ... modified by an
inplace operation"); the reported fix is `seqs = seqs * ~timeline_mask...`.
Source: https://github.com/orion-orion/FedDCSR/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PointWiseFeedForward(nn.Module):
    def __init__(self, hidden_units, dropout_rate):
        super().__init__()
        self.conv1 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout1 = nn.Dropout(p=dropout_rate)
        self.conv2 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout2 = nn.Dropout(p=dropout_rate)

    def forward(self, inputs):
        outputs = F.relu(self.dropout1(self.conv1(inputs.transpose(-1, -2))))
        outputs = self.dropout2(self.conv2(outputs))
        outputs = outputs.transpose(-1, -2)
        return outputs + inputs


class SelfAttention(nn.Module):
    def __init__(self, num_items, hidden_size=8, num_heads=2, num_blocks=1, dropout_rate=0.0):
        super().__init__()
        self.num_items = num_items
        self.attention_layernorms = nn.ModuleList()
        self.attention_layers = nn.ModuleList()
        self.forward_layernorms = nn.ModuleList()
        self.forward_layers = nn.ModuleList()
        self.last_layernorm = nn.LayerNorm(hidden_size, eps=1e-8)
        for _ in range(num_blocks):
            self.attention_layernorms.append(nn.LayerNorm(hidden_size, eps=1e-8))
            self.attention_layers.append(nn.MultiheadAttention(hidden_size, num_heads, dropout_rate))
            self.forward_layernorms.append(nn.LayerNorm(hidden_size, eps=1e-8))
            self.forward_layers.append(PointWiseFeedForward(hidden_size, dropout_rate))

    def forward(self, seqs, seqs_data):
        timeline_mask = torch.BoolTensor(seqs_data.cpu() == self.num_items)
        seqs *= ~timeline_mask.unsqueeze(-1)  # missed: ADL001
        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool))
        for i in range(len(self.attention_layers)):
            seqs = torch.transpose(seqs, 0, 1)
            Q = self.attention_layernorms[i](seqs)
            mha_outputs, _ = self.attention_layers[i](Q, seqs, seqs, attn_mask=attention_mask)
            seqs = Q + mha_outputs
            seqs = torch.transpose(seqs, 0, 1)
            seqs = self.forward_layernorms[i](seqs)
            seqs = self.forward_layers[i](seqs)
            seqs = seqs * ~timeline_mask.unsqueeze(-1)
        return self.last_layernorm(seqs)


class DisenVGSAN(nn.Module):
    def __init__(self, num_items, hidden_size=8):
        super().__init__()
        self.item_emb = nn.Embedding(num_items + 1, hidden_size, padding_idx=num_items)
        self.encoder_s = SelfAttention(num_items, hidden_size)
        self.encoder_e = SelfAttention(num_items, hidden_size)
        self.head = nn.Linear(2 * hidden_size, num_items)

    def forward(self, seqs_data):
        seqs = self.item_emb(seqs_data) * self.item_emb.embedding_dim ** 0.5
        z_s = self.encoder_s(seqs, seqs_data)
        z_e = self.encoder_e(seqs, seqs_data)
        return self.head(torch.cat([z_s, z_e], dim=-1))


def train_epoch(model, batches, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for seqs_data, targets in batches:
        logits = model(seqs_data)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    num_items = 10
    seqs_data = torch.randint(0, num_items + 1, (3, 5))
    targets = torch.randint(0, num_items, (3, 5))
    train_epoch(DisenVGSAN(num_items), [(seqs_data, targets)])
