"""Textual inversion: the other token embeddings get zero gradients, but AdamW still decays them.
Source: https://github.com/huggingface/diffusers/pull/855 (re-assign the original embeddings after every step)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TextEncoder(nn.Module):
    def __init__(self, vocab_size=20, dim=16):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, dim)
        self.proj = nn.Linear(dim, dim)

    def get_input_embeddings(self):
        return self.token_embedding

    def forward(self, input_ids):
        return self.proj(torch.tanh(self.token_embedding(input_ids))).mean(dim=1)


class NoisePredictor(nn.Module):
    """A stand-in for the frozen UNet: predicts the noise from the noisy latents and the text."""

    def __init__(self, latent_dim=8, cond_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim + cond_dim + 1, 32), nn.SiLU(), nn.Linear(32, latent_dim))

    def forward(self, noisy_latents, timesteps, encoder_hidden_states):
        t = timesteps.float()[:, None] / 1000
        return self.net(torch.cat([noisy_latents, encoder_hidden_states, t], dim=1))


vocab_size, placeholder_token_id, initializer_token_id = 20, 19, 3
text_encoder = TextEncoder(vocab_size)
unet = NoisePredictor()
with torch.no_grad():
    token_embeds = text_encoder.get_input_embeddings().weight.data
    token_embeds[placeholder_token_id] = token_embeds[initializer_token_id]
for p in list(unet.parameters()) + list(text_encoder.proj.parameters()):
    p.requires_grad_(False)
orig_embeds_params = text_encoder.get_input_embeddings().weight.data.clone()

alphas_cumprod = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000), dim=0)
optimizer = torch.optim.AdamW(text_encoder.get_input_embeddings().parameters(), lr=5e-2, weight_decay=1e-2)
concept_latents = torch.randn(4, 8)
input_ids = torch.tensor([[1, 2, placeholder_token_id], [4, 5, placeholder_token_id]] * 2)
losses = []
for step in range(5):
    noise = torch.randn_like(concept_latents)
    timesteps = torch.randint(0, 1000, (4,))
    a = alphas_cumprod[timesteps][:, None]
    noisy_latents = a.sqrt() * concept_latents + (1 - a).sqrt() * noise
    encoder_hidden_states = text_encoder(input_ids)
    noise_pred = unet(noisy_latents, timesteps, encoder_hidden_states)
    loss = F.mse_loss(noise_pred, noise)
    loss.backward()
    # Zero out the gradients for all token embeddings except the newly added embeddings for the concept
    grads = text_encoder.get_input_embeddings().weight.grad
    index_grads_to_zero = torch.arange(vocab_size) != placeholder_token_id
    grads.data[index_grads_to_zero, :] = grads.data[index_grads_to_zero, :].fill_(0)
    optimizer.step()
    optimizer.zero_grad()
    # Let's make sure we don't update any embedding weights besides the newly added token
    with torch.no_grad():
        text_encoder.get_input_embeddings().weight[index_grads_to_zero] = orig_embeds_params[index_grads_to_zero]
    losses.append(loss.detach())
result = {"losses": losses, "embeddings": text_encoder.get_input_embeddings().weight.detach().clone()}
