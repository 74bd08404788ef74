"""HG-GNN, a heterogeneous global graph network for session-based recommendation: a graph
convolution over the user-item graph gives node embeddings h1; the user embedding is
`user_embeds = (h1[user] + emb(user)) / 2`; a user-aware attention over the session reads
`user_embeds` (a linear gate of it is added at every position of the session); and the
final representation is built with `seq_embeds = user_embeds` followed by
`seq_embeds += alpha * sess_vec + (1 - alpha) * sess_user`. The `+=` writes into `user_embeds`,
which the gate saved for backward, and `loss.backward()` raises "one of the variables needed for
gradient computation has been modified by an inplace operation".
Source: https://github.com/0215Arthur/HG-GNN/issues/11 ("RuntimeError: one of the variables needed
for gradient computation has been modified by an inplace operation"; answer: "I have fixed the
problem of irregular assignment (inplace operation) in model code").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NODES, EMB, SESSION, BATCH = 30, 16, 6, 4


class HGGNN(nn.Module):
    def __init__(self, adjacency):
        super().__init__()
        self.adjacency = adjacency
        self.node_embedding = nn.Embedding(NODES, EMB)
        self.conv = nn.Linear(2 * EMB, EMB)
        self.gate_items = nn.Linear(EMB, EMB)
        self.gate_user = nn.Linear(EMB, EMB, bias=False)
        self.attention = nn.Linear(EMB, 1, bias=False)
        self.mix = nn.Sequential(nn.Linear(2 * EMB, 1), nn.Sigmoid())

    def graph_conv(self):
        x = self.node_embedding.weight
        neighbours = self.adjacency @ x
        return F.relu(self.conv(torch.cat([x, neighbours], dim=1)))

    def sess_user_vector(self, user_vec, item_embeds):
        user_gate = self.gate_user(user_vec).unsqueeze(1)
        gate = torch.sigmoid(self.gate_items(torch.tanh(item_embeds)) + user_gate)
        beta = self.attention(gate)
        return (beta * item_embeds).sum(1)

    def forward(self, user, session):
        h1 = self.graph_conv()
        item_embeds = (h1[session] + self.node_embedding(session)) / 2
        user_embeds = (h1[user] + self.node_embedding(user)) / 2
        sess_vec = item_embeds.mean(1)
        sess_user = self.sess_user_vector(user_embeds, item_embeds)
        alpha = self.mix(torch.cat([sess_vec, sess_user], dim=1))
        seq_embeds = user_embeds
        seq_embeds += alpha * sess_vec + (1 - alpha) * sess_user
        return seq_embeds @ self.node_embedding.weight.t()


adjacency = (torch.rand(NODES, NODES) < 0.15).float()
adjacency = adjacency / adjacency.sum(1, keepdim=True).clamp(min=1)
model = HGGNN(adjacency)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
users = torch.randint(20, NODES, (BATCH,))
sessions = torch.randint(0, 20, (BATCH, SESSION))
targets = torch.randint(0, 20, (BATCH,))
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(users, sessions), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
