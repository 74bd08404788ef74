"""wav2vec2 feature encoder inside a bigger model: it sets `hidden_states.requires_grad = True`
on its input, which is not a leaf when it comes from a trainable front end.
Source: https://github.com/huggingface/transformers/issues/17909 ("you can only change
requires_grad flags of leaf variables"; fix: only set the flag on a leaf).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class FeatureEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 5, stride=2)

    def forward(self, input_values):
        hidden_states = input_values[:, None]
        if self.training:
            hidden_states.requires_grad = True
        return self.conv(hidden_states).transpose(1, 2)


front_end = nn.Linear(16, 16)
encoder = FeatureEncoder().train()
audio = torch.randn(2, 16)
features = encoder(front_end(audio))
loss = features.pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in (*front_end.parameters(), *encoder.parameters())]}
