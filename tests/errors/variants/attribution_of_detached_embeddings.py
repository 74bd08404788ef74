# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 8
# trigger: a token attribution (gradient x input) detaches the embedding output to make it a leaf
#   of its own, runs the rest of the model on it and asks torch.autograd.grad for the gradient with
#   respect to it; the detached tensor was never made to require grad
# source: none found; the pattern as users write it (saliency on embeddings, as in Captum's
#   embedding attributions done by hand)
# results: attribution, model
import torch
from torch import nn


class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.classify = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))

    def forward(self, tokens):
        return self.classify(self.embed(tokens).mean(1))


torch.manual_seed(0)
model = TextClassifier()
tokens = torch.tensor([[1, 4, 2], [3, 3, 7]])
embedded = model.embed(tokens).detach()  # PRIMARY
scores = model.classify(embedded.mean(1))
(gradient,) = torch.autograd.grad(scores[:, 1].sum(), embedded)
attribution = (gradient * embedded).sum(-1)
