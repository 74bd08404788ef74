"""SGL (self-supervised graph learning for recommendation): the trainer's
epoch loop adds each batch's loss into the epoch's totals as tensors,
`total_loss += loss` (and `total_bpr_loss += bpr_loss`), before
`loss.backward()` and the step, and only formats the totals into a log line
after the epoch.  `loss` carries the graph of the whole LightGCN propagation
(the backward proves it), so the total links to the graph of every batch of
the epoch: the autograd nodes held grow with the number of batches until the
epoch ends.  Nothing raises; the logged numbers are right.  The fix sums
`loss.item()`.  Found by the first run of set S (docs/lint.md, twenty-first
check).  The part's sum (`total_bpr_loss += bpr_loss`, `bpr_loss` an operand
of the backpropagated `loss`) keeps the same graphs: missed at first, found
since ADL023 reads the running sums of a loss's parts (docs/lint.md, "ADL023:
the running sums of a loss's parts").
Source: https://github.com/wujcan/SGL-Torch (model/general_recommender/SGL.py,
SGL.train_model)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LightGCN(nn.Module):
    def __init__(self, num_users=20, num_items=30, dim=8, num_layers=2):
        super().__init__()
        self.user_embeddings = nn.Embedding(num_users, dim)
        self.item_embeddings = nn.Embedding(num_items, dim)
        self.num_layers = num_layers
        self.num_users = num_users

    def forward(self, adj, users, pos_items, neg_items):
        ego = torch.cat([self.user_embeddings.weight, self.item_embeddings.weight], 0)
        layers = [ego]
        for _ in range(self.num_layers):
            ego = adj @ ego
            layers.append(ego)
        final = torch.stack(layers, 1).mean(1)
        user_emb, item_emb = final[:self.num_users], final[self.num_users:]
        u = user_emb[users]
        pos = (u * item_emb[pos_items]).sum(-1)
        neg = (u * item_emb[neg_items]).sum(-1)
        return pos - neg


class SGLTrainer:
    def __init__(self, num_users=20, num_items=30):
        self.lightgcn = LightGCN(num_users, num_items)
        self.optimizer = torch.optim.Adam(self.lightgcn.parameters(), lr=0.01)
        self.reg = 1e-4
        n = num_users + num_items
        self.adj = torch.rand(n, n) / n

    def train_epoch(self, batches):
        total_loss, total_bpr_loss = 0.0, 0.0
        for users, pos_items, neg_items in batches:
            sup_logits = self.lightgcn(self.adj, users, pos_items, neg_items)
            bpr_loss = -torch.sum(F.logsigmoid(sup_logits))
            reg_loss = self.lightgcn.user_embeddings(users).pow(2).sum()
            loss = bpr_loss + self.reg * reg_loss
            total_loss += loss  # expect: ADL023
            total_bpr_loss += bpr_loss  # expect: ADL023
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return "loss : %.4f = %.4f + ..." % (total_loss / len(batches), total_bpr_loss / len(batches)), total_loss


def autograd_nodes(tensor):
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def batches(count):
    return [(torch.randint(0, 20, (8,)), torch.randint(0, 30, (8,)), torch.randint(0, 30, (8,)))
            for _ in range(count)]


def bug_shows():
    """The epoch's total holds the graph of every batch: twice the batches,
    about twice the autograd nodes."""
    torch.manual_seed(0)
    _, short_total = SGLTrainer().train_epoch(batches(5))
    _, long_total = SGLTrainer().train_epoch(batches(10))
    return autograd_nodes(long_total) > 1.8 * autograd_nodes(short_total) > 0
