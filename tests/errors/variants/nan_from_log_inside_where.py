# message: Function 'MulBackward0' returned nan values in its 0th output.
# code: AD118 (catalogue: anomaly_nan)
# trigger: an entropy term guards log(p) with torch.where(p > 0, ...), which hides the value but
#   not the gradient; anomaly detection is switched on globally with set_detect_anomaly(True)
# source: none found; the pattern as users write it
# results: entropy_value, logits.grad
import torch


def entropy(p):
    return -torch.where(p > 0, p * torch.log(p), torch.zeros_like(p)).sum(-1)  # PRIMARY


torch.autograd.set_detect_anomaly(True)
logits = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], requires_grad=True)
p = torch.relu(logits) / torch.relu(logits).sum(-1, keepdim=True)
entropy_value = entropy(p).mean()
entropy_value.backward()
torch.autograd.set_detect_anomaly(False)
