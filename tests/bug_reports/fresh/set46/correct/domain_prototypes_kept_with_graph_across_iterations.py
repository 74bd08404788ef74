"""Multi-source domain adaptation by learning to combine domains: a feature extractor G and a GCN
over a graph whose nodes are per-(domain, class) prototypes `self.mean` plus the batch's features.
Each iteration `update_statistics` refreshes the prototypes as a moving average of the batch's
class means and stores the result, with its graph through G, in `self.mean`; the loss is
back-propagated with `retain_graph=True` and both optimizers step. The next iteration's loss reaches
back through `self.mean` into the previous iteration's graph, whose saved weights the steps have
changed in place: "one of the variables needed for gradient computation has been modified by an
inplace operation". The thread's only answer is an older PyTorch (1.1, which did not check); the
change the loop needs: start each iteration from the prototypes and their adjacency without the
previous iteration's graph (`self.mean = self.mean.detach()`, `self.adj = self.adj.detach()`), so
each backward covers its own iteration.
Source: https://github.com/ChrisAllenMing/LtC-MSDA/issues/3
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NCLASSES, NDOMAIN, NFEAT, BATCH = 3, 3, 6, 6


class Args:
    nclasses = NCLASSES
    nfeat = NFEAT
    beta = 0.7
    sigma = 0.5
    Lambda_global = 0.1
    Lambda_local = 0.1


class GCN(nn.Module):
    def __init__(self, nfeat, nclasses):
        super().__init__()
        self.fc1 = nn.Linear(nfeat, nfeat)
        self.fc2 = nn.Linear(nfeat, nclasses)

    def forward(self, x, adj):
        x = F.relu(adj @ self.fc1(x))
        return adj @ self.fc2(x)


class Solver:
    def __init__(self, args):
        self.args = args
        self.ndomain = NDOMAIN
        self.G = nn.Sequential(nn.Linear(4, NFEAT), nn.BatchNorm1d(NFEAT), nn.ReLU())
        self.GCN = GCN(NFEAT, NCLASSES)
        self.opt_g = torch.optim.SGD(self.G.parameters(), lr=0.05)
        self.opt_gcn = torch.optim.SGD(self.GCN.parameters(), lr=0.05)
        self.mean = torch.zeros(args.nclasses * self.ndomain, args.nfeat)
        self.adj = torch.eye(args.nclasses * self.ndomain)

    def reset_grad(self):
        self.opt_g.zero_grad()
        self.opt_gcn.zero_grad()

    def euclid_dist(self, x, y):
        return ((x.unsqueeze(1) - y.unsqueeze(0)) ** 2).sum(-1)

    def construct_adj(self, feats):
        dist = self.euclid_dist(self.mean, feats)
        sim = torch.exp(-dist / (2 * self.args.sigma ** 2))
        E = torch.eye(feats.shape[0]).float()

        A = torch.cat([self.adj, sim], dim=1)
        B = torch.cat([sim.t(), E], dim=1)
        gcn_adj = torch.cat([A, B], dim=0)
        return gcn_adj

    def pseudo_label(self, logit, feat):
        pred = F.softmax(logit, dim=1)
        _, label = pred.max(dim=1)
        return feat, label

    def update_statistics(self, feats, labels, epsilon=1e-5):
        curr_mean = list()
        num_labels = 0
        for domain_idx in range(self.ndomain):
            tmp_feat = feats[domain_idx]
            tmp_label = labels[domain_idx]
            num_labels += tmp_label.shape[0]
            onehot_label = torch.zeros((tmp_label.shape[0], self.args.nclasses)).scatter_(
                1, tmp_label.unsqueeze(-1), 1).float()
            domain_feature = tmp_feat.unsqueeze(1) * onehot_label.unsqueeze(-1)
            tmp_mean = domain_feature.sum(0) / (onehot_label.unsqueeze(-1).sum(0) + epsilon)
            curr_mean.append(tmp_mean)

        curr_mean = torch.cat(curr_mean, dim=0)
        curr_mask = (curr_mean.sum(-1) != 0).float().unsqueeze(-1)
        self.mean = self.mean.detach() * (1 - curr_mask) + (
            self.mean.detach() * self.args.beta + curr_mean * (1 - self.args.beta)) * curr_mask
        curr_dist = self.euclid_dist(self.mean, self.mean)
        self.adj = torch.exp(-curr_dist / (2 * self.args.sigma ** 2))

        loss_local = ((((curr_mean - self.mean) * curr_mask) ** 2).mean(-1)).sum() / num_labels
        return loss_local

    def adj_loss(self):
        adj_loss = 0
        n = self.args.nclasses
        for i in range(self.ndomain):
            for j in range(self.ndomain):
                adj_ii = self.adj[i * n:(i + 1) * n, i * n:(i + 1) * n]
                adj_jj = self.adj[j * n:(j + 1) * n, j * n:(j + 1) * n]
                adj_ij = self.adj[i * n:(i + 1) * n, j * n:(j + 1) * n]
                adj_loss += ((adj_ii - adj_jj) ** 2).mean()
                adj_loss += ((adj_ij - adj_ii) ** 2).mean()
                adj_loss += ((adj_ij - adj_jj) ** 2).mean()
        adj_loss /= (self.ndomain * (self.ndomain - 1) / 2 * 3)
        return adj_loss

    def train_gcn_adapt(self, batches):
        criterion = nn.CrossEntropyLoss()
        losses = []
        for data in batches:
            img_s, label_s = data["S"], [lab.clone() for lab in data["S_label"]]
            img_t = data["T"]
            self.reset_grad()
            self.mean = self.mean.detach()
            self.adj = self.adj.detach()

            feat_list = list()
            for domain_idx in range(self.ndomain - 1):
                feat_list.append(self.G(img_s[domain_idx]))
            feat_t = self.G(img_t)
            feat_list.append(feat_t)
            feats = torch.cat(feat_list, dim=0)
            labels = torch.cat(label_s, dim=0)

            gcn_feats = torch.cat([self.mean, feats], dim=0)
            gcn_adj = self.construct_adj(feats)
            gcn_logit = self.GCN(gcn_feats, gcn_adj)

            feat_t_, label_t_ = self.pseudo_label(gcn_logit[-feat_t.shape[0]:, :], feat_t)
            feat_list.pop()
            feat_list.append(feat_t_)
            label_s.append(label_t_)

            loss_local = self.update_statistics(feat_list, label_s)

            domain_logit = gcn_logit[:self.mean.shape[0], :]
            domain_label = torch.cat([torch.arange(self.args.nclasses)] * self.ndomain, dim=0)
            loss_cls_dom = criterion(domain_logit, domain_label)

            query_logit = gcn_logit[self.mean.shape[0]:, :]
            loss_cls_src = criterion(query_logit[:-feat_t.shape[0]], labels)

            target_logit = query_logit[-feat_t.shape[0]:]
            target_prob = F.softmax(target_logit, dim=1)
            loss_cls_tgt = (-target_prob * torch.log(target_prob + 1e-8)).mean()
            loss_cls = loss_cls_dom + loss_cls_src + loss_cls_tgt

            loss_global = self.adj_loss() * self.args.Lambda_global
            loss_local = loss_local * self.args.Lambda_local
            loss = loss_cls + loss_local + loss_global

            loss.backward(retain_graph=True)
            self.opt_gcn.step()
            self.opt_g.step()
            losses.append(loss.item())
        return losses


def make_batches(n):
    batches = []
    for _ in range(n):
        img_s = [torch.randn(BATCH, 4) + d for d in range(NDOMAIN - 1)]
        label_s = [torch.arange(BATCH) % NCLASSES for _ in range(NDOMAIN - 1)]
        batches.append({"S": img_s, "S_label": label_s, "T": torch.randn(BATCH, 4) + 0.5})
    return batches


solver = Solver(Args())
losses = solver.train_gcn_adapt(make_batches(3))

result = {"G": {k: v.detach().clone() for k, v in solver.G.state_dict().items()},
          "GCN": {k: v.detach().clone() for k, v in solver.GCN.state_dict().items()},
          "mean": solver.mean.detach().clone(), "losses": torch.tensor(losses)}
