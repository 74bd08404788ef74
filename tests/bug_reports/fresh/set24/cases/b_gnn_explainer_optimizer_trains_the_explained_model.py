"""GNNExplainer on a trained node classifier (DGL's gnn_explainer example): the explainer module
holds the trained model and two learned masks, a soft mask over the edges and one over the node
features, and the masks are fitted so that the masked graph keeps the model's prediction for one
node. The optimizer is built from `explainer.parameters()`, which include the model's own weights
(the model is a sub-module of the explainer), so every explainer step also changes the model that
is being explained; the masks then explain a different, drifting classifier. Nothing raises.
Source: https://github.com/dmlc/dgl/issues/3944 (fixed by https://github.com/dmlc/dgl/pull/3948:
the optimizer is given the two masks only)
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_NODES, FEATS, HIDDEN, CLASSES = 14, 6, 8, 3


class GraphConv(nn.Module):
    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.linear = nn.Linear(in_feats, out_feats)

    def forward(self, adj, feat, eweight=None):
        if eweight is not None:
            adj = adj * eweight
        degree = adj.sum(dim=1, keepdim=True).clamp(min=1.0)
        return self.linear(adj @ feat / degree)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GraphConv(FEATS, HIDDEN)
        self.conv2 = GraphConv(HIDDEN, CLASSES)

    def forward(self, adj, feat, eweight=None):
        h = F.relu(self.conv1(adj, feat, eweight))
        return self.conv2(adj, h, eweight)


class NodeExplainerModule(nn.Module):
    def __init__(self, model, num_nodes, feat_dim):
        super().__init__()
        self.model = model
        self.edge_mask = nn.Parameter(torch.randn(num_nodes, num_nodes) * 0.1)
        self.node_feat_mask = nn.Parameter(torch.randn(feat_dim) * 0.1)

    def forward(self, adj, feat):
        masked_feat = feat * torch.sigmoid(self.node_feat_mask)
        return self.model(adj, masked_feat, eweight=torch.sigmoid(self.edge_mask))

    def loss(self, logits, node, label, adj):
        pred_loss = -F.log_softmax(logits[node], dim=-1)[label]
        edge_probs = torch.sigmoid(self.edge_mask) * adj
        size_loss = 0.005 * edge_probs.sum()
        feat_probs = torch.sigmoid(self.node_feat_mask)
        entropy = -(feat_probs * torch.log(feat_probs + 1e-8)
                    + (1 - feat_probs) * torch.log(1 - feat_probs + 1e-8)).mean()
        return pred_loss + size_loss + 0.1 * entropy


adj = (torch.rand(N_NODES, N_NODES) < 0.3).float()
adj = ((adj + adj.t() + torch.eye(N_NODES)) > 0).float()
features = torch.randn(N_NODES, FEATS)
labels = torch.randint(0, CLASSES, (N_NODES,))

model = Model()
model_optim = torch.optim.Adam(model.parameters(), lr=0.05)
for _ in range(30):
    loss = F.cross_entropy(model(adj, features), labels)
    model_optim.zero_grad()
    loss.backward()
    model_optim.step()

model.eval()
node = 3
with torch.no_grad():
    predicted = model(adj, features)[node].argmax()

explainer = NodeExplainerModule(model=model, num_nodes=N_NODES, feat_dim=FEATS)
optim = torch.optim.Adam(explainer.parameters(), lr=0.05, weight_decay=0.0)
explainer_losses = []
for _ in range(40):
    logits = explainer(adj, features)
    loss = explainer.loss(logits, node, predicted, adj)
    optim.zero_grad()
    loss.backward()
    optim.step()
    explainer_losses.append(loss.detach())

result = {
    "losses": torch.stack(explainer_losses),
    "edge_mask": explainer.edge_mask.detach().clone(),
    "feat_mask": explainer.node_feat_mask.detach().clone(),
    "model": [p.detach().clone() for p in model.parameters()],
}
