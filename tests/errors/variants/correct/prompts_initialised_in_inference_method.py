# message: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.
# code: AD111 (catalogue: inference_requires_grad)
# set: 3
# trigger: prompt tuning: a method decorated with @torch.inference_mode() initialises the prompt
#   vectors from a frozen embedding; the caller then sets `.requires_grad = True` on them
# source: none found; the pattern as users write it
# results: losses, tuner.prompts
import torch
from torch import nn
import torch.nn.functional as F


class PromptTuner:
    def __init__(self, embedding, n_prompts):
        self.embedding = embedding.requires_grad_(False)
        self.prompts = self.init_prompts(n_prompts)
        self.prompts.requires_grad = True

    @torch.no_grad()  # PRIMARY
    def init_prompts(self, n_prompts):
        return self.embedding.weight[:n_prompts].clone()

    def score(self, ids):
        tokens = self.embedding(ids)
        return (tokens @ self.prompts.T).mean(dim=(1, 2))


torch.manual_seed(0)
tuner = PromptTuner(nn.Embedding(12, 4), n_prompts=3)
optimizer = torch.optim.SGD([tuner.prompts], lr=0.1)
ids, y = torch.tensor([[1, 5, 7], [2, 3, 9]]), torch.tensor([1.0, 0.0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(tuner.score(ids), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
