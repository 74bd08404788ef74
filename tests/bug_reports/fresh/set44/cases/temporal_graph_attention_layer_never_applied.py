"""RE-Net, a recurrent event network over a temporal knowledge graph: for each query subject, an
aggregator summarises the subject's neighbourhood at each past timestamp, and a GRU reads the
sequence of summaries. The attention aggregator defines an attention layer, `self.attn_s`, but its
forward pass builds the sequence tensor with `torch.zeros(...)`, passes it through dropout and packs
it, and never applies `attn_s` to the neighbours' embeddings: the attention weights get no
gradient and never change, and the GRU reads zeros, with no error. The reporter: the linear
layer is never applied to the inputs, so it will not train; the change applies it, filling each
timestep with the subject, the relation and the attention-weighted neighbours.
Source: https://github.com/INK-USC/RE-Net/issues/6
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AttnAggregator(nn.Module):
    def __init__(self, h_dim, dropout, seq_len=3):
        super().__init__()
        self.h_dim = h_dim
        self.seq_len = seq_len
        self.dropout = nn.Dropout(dropout)
        self.attn_s = nn.Linear(3 * h_dim, h_dim)
        self.v_s = nn.Parameter(torch.randn(h_dim, 1) * 0.1)

    def forward(self, s_hist, s, r, ent_embeds, rel_embeds):
        s_len_non_zero = [len(his) for his in s_hist]
        s_embed_seq_tensor = torch.zeros(len(s_len_non_zero), self.seq_len, 3 * self.h_dim)
        s_embed_seq_tensor = self.dropout(s_embed_seq_tensor)
        s_packed_input = torch.nn.utils.rnn.pack_padded_sequence(s_embed_seq_tensor, s_len_non_zero,
                                                                 batch_first=True)
        return s_packed_input


class RENet(nn.Module):
    def __init__(self, num_entities, num_rels, h_dim=8):
        super().__init__()
        self.ent_embeds = nn.Parameter(torch.randn(num_entities, h_dim) * 0.1)
        self.rel_embeds = nn.Parameter(torch.randn(num_rels, h_dim) * 0.1)
        self.aggregator = AttnAggregator(h_dim, dropout=0.0)
        self.encoder = nn.GRU(3 * h_dim, h_dim, batch_first=True)
        self.linear = nn.Linear(3 * h_dim, num_entities)

    def forward(self, s, r, s_hist):
        packed_input = self.aggregator(s_hist, s, r, self.ent_embeds, self.rel_embeds)
        _, s_h = self.encoder(packed_input)
        s_h = s_h.squeeze(0)
        return self.linear(torch.cat((self.ent_embeds[s], s_h, self.rel_embeds[r]), dim=1))


num_entities, num_rels = 10, 3
model = RENet(num_entities, num_rels)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
subjects = torch.tensor([0, 1, 2, 3])
relations = torch.tensor([0, 1, 2, 0])
objects = torch.tensor([4, 5, 6, 7])
# each subject's history, most recent timestamps first: per timestamp, its (relation, neighbour) pairs
histories = [[torch.tensor([[0, 4], [1, 8]]), torch.tensor([[2, 9]]), torch.tensor([[0, 5]])],
             [torch.tensor([[1, 5]]), torch.tensor([[1, 6], [2, 7]])],
             [torch.tensor([[2, 6], [0, 3]]), torch.tensor([[1, 1]]), torch.tensor([[0, 2]])],
             [torch.tensor([[0, 7]])]]
order = sorted(range(len(histories)), key=lambda k: -len(histories[k]))
subjects, relations, objects = subjects[order], relations[order], objects[order]
histories = [histories[k] for k in order]

losses = []
for epoch in range(20):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(subjects, relations, histories), objects)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in model.parameters()]}
