# message: Function 'SqrtBackward0' returned nan values in its 0th output.
# code: AD118 (catalogue: anomaly_nan)
# set: 6
# trigger: a batch-hard triplet loss builds the pairwise distance matrix as
#   diff.pow(2).sum(-1).sqrt(); its diagonal is 0, where sqrt's derivative is infinite, and
#   masking the diagonal out of the loss makes 0 * inf = NaN under anomaly detection
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.autograd.set_detect_anomaly(True)


def pairwise_distances(embeddings):
    difference = embeddings.unsqueeze(1) - embeddings.unsqueeze(0)
    return difference.pow(2).sum(-1).sqrt()  # PRIMARY


torch.manual_seed(0)
model = nn.Linear(5, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels = torch.randn(6, 5), torch.tensor([0, 0, 1, 1, 2, 2])
same = labels.unsqueeze(0) == labels.unsqueeze(1)
positive = same & ~torch.eye(6, dtype=torch.bool)
losses = []
for _ in range(2):
    distances = pairwise_distances(model(x))
    hardest_positive = distances.masked_fill(~positive, 0.0).max(1).values
    hardest_negative = distances.masked_fill(same, float("inf")).min(1).values
    optimizer.zero_grad()
    loss = F.relu(hardest_positive - hardest_negative + 1.0).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
