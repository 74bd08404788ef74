# message: torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than during the forward pass.
# code: AD125 (catalogue: checkpoint_recompute_mismatch)
# set: 31
# trigger: a streaming audio encoder's block (checkpointed with use_reentrant=False) appends the
#   current chunk to a memory list kept on the module inside the checkpointed function and attends
#   over torch.cat of the memory: the recomputation in backward sees one chunk more
# source: none found; the pattern as users write it (a conformer-like streaming cache under checkpoint)
# results: losses, model
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class StreamingBlock(nn.Module):
    def __init__(self, features=4):
        super().__init__()
        self.query = nn.Linear(features, features)
        self.memory = []

    def attend(self, chunk, context):  # PRIMARY
        weights = torch.softmax(self.query(chunk) @ context.T, dim=-1)
        return chunk + weights @ context


class Encoder(nn.Module):
    def __init__(self, features=4):
        super().__init__()
        self.frontend = nn.Linear(features, features)
        self.block = StreamingBlock(features)

    def forward(self, chunk):
        features = self.frontend(chunk)
        self.block.memory.append(features.detach())
        context = torch.cat(self.block.memory, dim=0)
        return checkpoint(self.block.attend, features, context, use_reentrant=False)


torch.manual_seed(0)
model = Encoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for chunk in torch.randn(3, 5, 4):
    optimizer.zero_grad()
    loss = model(chunk).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
