# message: the derivative for '_cdist_backward' is not implemented.
# code: AD184 (catalogue: cdist_second_derivative)
# set: 16
# trigger: second-order MAML over a prototypical-network head: the query logits are minus
#   torch.cdist distances to the class prototypes, the inner step's gradient is taken with
#   create_graph=True and the outer loss is backpropagated through it
# source: none found; the pattern as users write it (ProtoNet distances inside a MAML inner loop)
# results: outer_loss, encoder
import torch
from torch import nn


def proto_logits(embed_q, embed_s, labels_s, n_way):
    prototypes = torch.stack([embed_s[labels_s == c].mean(0) for c in range(n_way)])
    return -torch.cdist(embed_q, prototypes)  # PRIMARY


def adapted_loss(encoder, support, labels_s, query, labels_q, inner_lr=0.1):
    w = encoder.weight
    inner = nn.functional.cross_entropy(proto_logits(support @ w.T, support @ w.T, labels_s, 3), labels_s)
    (g,) = torch.autograd.grad(inner, w, create_graph=True)
    w_fast = w - inner_lr * g
    return nn.functional.cross_entropy(proto_logits(query @ w_fast.T, support @ w_fast.T, labels_s, 3), labels_q)


torch.manual_seed(0)
encoder = nn.Linear(4, 5, bias=False)
support, labels_s = torch.randn(9, 4), torch.arange(3).repeat(3)
query, labels_q = torch.randn(6, 4), torch.arange(3).repeat(2)
outer_loss = adapted_loss(encoder, support, labels_s, query, labels_q)
outer_loss.backward()
