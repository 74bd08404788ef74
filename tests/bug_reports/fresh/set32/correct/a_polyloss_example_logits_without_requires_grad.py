"""polyloss-pytorch's README example for the Poly-1 cross-entropy loss builds random logits with
`logits = torch.rand([batch_size, num_classes])`, computes `loss = Poly1CrossEntropyLoss(...)(
logits, labels)` and calls `loss.backward()`; on torch 1.11 it fails with "element 0 of tensors
does not require grad and does not have a grad_fn": nothing in the example requires grad. The
reporter's fix: `logits = torch.rand([batch_size, num_classes], requires_grad=True)`.
Source: https://github.com/abhuse/polyloss-pytorch/issues/4
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Poly1CrossEntropyLoss(nn.Module):
    def __init__(self, num_classes, epsilon=1.0, reduction="none", weight=None):
        super().__init__()
        self.num_classes = num_classes
        self.epsilon = epsilon
        self.reduction = reduction
        self.weight = weight

    def forward(self, logits, labels):
        labels_onehot = F.one_hot(labels, num_classes=self.num_classes).to(device=logits.device, dtype=logits.dtype)
        pt = torch.sum(labels_onehot * F.softmax(logits, dim=-1), dim=-1)
        ce = F.cross_entropy(input=logits, target=labels, reduction="none", weight=self.weight)
        poly1 = ce + self.epsilon * (1 - pt)
        if self.reduction == "mean":
            poly1 = poly1.mean()
        elif self.reduction == "sum":
            poly1 = poly1.sum()
        return poly1


batch_size = 10
num_classes = 5
logits = torch.rand([batch_size, num_classes], requires_grad=True)
labels = torch.randint(0, num_classes, [batch_size])
loss = Poly1CrossEntropyLoss(num_classes=num_classes, reduction="mean")(logits, labels)
loss.backward()

result = {"loss": loss.detach(), "grad": logits.grad.clone()}
