"""PyKEEN's CompGCN whose buffered representations are invalidated when the module goes back from
evaluation to training mode, so training after an early-stopping evaluation recomputes them with a graph.
Source: https://github.com/pykeen/pykeen/pull/573"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

ENTITIES, RELATIONS, DIM, TRIPLES = 10, 3, 8, 24


class CompGCNLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w_in = nn.Linear(dim, dim, bias=False)
        self.w_self = nn.Linear(dim, dim, bias=False)
        self.w_rel = nn.Linear(dim, dim, bias=False)

    def forward(self, x_e, x_r, edge_index, edge_type):
        messages = self.w_in(x_e[edge_index[0]] * x_r[edge_type])
        aggregated = torch.zeros_like(x_e).index_add(0, edge_index[1], messages)
        return torch.tanh(aggregated + self.w_self(x_e)), self.w_rel(x_r)


class CombinedCompGCNRepresentations(nn.Module):
    def __init__(self, mapped_triples):
        super().__init__()
        self.entity_representations = nn.Embedding(ENTITIES, DIM)
        self.relation_representations = nn.Embedding(2 * RELATIONS, DIM)
        self.layers = nn.ModuleList([CompGCNLayer(DIM)])
        inverse = torch.stack([mapped_triples[:, 2], mapped_triples[:, 1] + RELATIONS, mapped_triples[:, 0]], dim=1)
        triples = torch.cat([mapped_triples, inverse])
        self.register_buffer("edge_index", triples[:, [0, 2]].t())
        self.register_buffer("edge_type", triples[:, 1])
        # initialize buffer of enriched representations
        self.enriched_representations = None

    def post_parameter_update(self):
        # invalidate enriched embeddings
        self.enriched_representations = None

    def train(self, mode=True):
        # when changing from evaluation to training mode, the buffered representations have been
        # computed without gradient tracking. hence, we need to invalidate them.
        if mode and not self.training:
            self.enriched_representations = None
        return super().train(mode=mode)

    def forward(self):
        if self.enriched_representations is None:
            x_e = self.entity_representations.weight
            x_r = self.relation_representations.weight
            for layer in self.layers:
                x_e, x_r = layer(x_e, x_r, self.edge_index, self.edge_type)
            self.enriched_representations = (x_e, x_r)
        return self.enriched_representations


class CompGCN(nn.Module):
    def __init__(self, mapped_triples):
        super().__init__()
        self.representations = CombinedCompGCNRepresentations(mapped_triples)

    def score_hrt(self, hrt):
        x_e, x_r = self.representations()
        return (x_e[hrt[:, 0]] * x_r[hrt[:, 1]] * x_e[hrt[:, 2]]).sum(dim=-1)

    def post_parameter_update(self):
        self.representations.post_parameter_update()


mapped_triples = torch.stack([
    torch.randint(0, ENTITIES, (TRIPLES,)), torch.randint(0, RELATIONS, (TRIPLES,)),
    torch.randint(0, ENTITIES, (TRIPLES,)),
], dim=1)
validation = mapped_triples[:6]
model = CompGCN(mapped_triples)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)


def train_epoch():
    model.train()
    losses = []
    for batch in mapped_triples.split(8):
        negatives = batch.clone()
        negatives[:, 2] = torch.randint(0, ENTITIES, (batch.shape[0],))
        scores = torch.cat([model.score_hrt(batch), model.score_hrt(negatives)])
        labels = torch.cat([torch.ones(batch.shape[0]), torch.zeros(batch.shape[0])])
        loss = F.binary_cross_entropy_with_logits(scores, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.post_parameter_update()
        losses.append(loss.detach())
    return torch.stack(losses)


def evaluate():
    # the early stopper's evaluation: mean rank of the true tail among all entities
    model.eval()
    with torch.no_grad():
        x_e, x_r = model.representations()
        scores = (x_e[validation[:, 0]] * x_r[validation[:, 1]]) @ x_e.t()
        true_scores = scores.gather(1, validation[:, 2:3])
        return (scores > true_scores).float().sum(dim=1).add(1).mean()


history = []
for epoch in range(3):
    history.append(train_epoch())
    history.append(evaluate()[None])

result = {"history": torch.cat(history), "params": [p.detach().clone() for p in model.parameters()]}
