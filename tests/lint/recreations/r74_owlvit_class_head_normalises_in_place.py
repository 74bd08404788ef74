"""OWL-ViT's class-prediction head normalises the image class embeddings and
the query embeddings with `/=` (`image_class_embeds /= torch.linalg.norm(...)
+ 1e-6`); the norm keeps its input for backward, so fine-tuning fails
("modified by an inplace operation"); the merged fix divides out of place.
Source: https://github.com/huggingface/transformers/pull/24529"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, hidden_size=8, query_dim=6):
        super().__init__()
        self.dense0 = nn.Linear(hidden_size, query_dim)
        self.logit_shift = nn.Linear(hidden_size, 1)
        self.logit_scale = nn.Linear(hidden_size, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds):
        image_class_embeds = self.dense0(image_embeds)

        # Normalize image and text features
        image_class_embeds /= torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6  # expect: ADL001
        query_embeds /= torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6  # expect: ADL001

        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.elu(self.logit_scale(image_embeds)) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale
        return pred_logits, image_class_embeds


class OwlViTForObjectDetection(nn.Module):
    def __init__(self, hidden_size=8, query_dim=6, vocab=12):
        super().__init__()
        self.vision_proj = nn.Linear(4, hidden_size)
        self.text_embed = nn.Embedding(vocab, query_dim)
        self.class_head = OwlViTClassPredictionHead(hidden_size, query_dim)

    def forward(self, pixel_patches, input_ids):
        image_embeds = self.vision_proj(pixel_patches)
        query_embeds = self.text_embed(input_ids).mean(1)
        logits, _ = self.class_head(image_embeds, query_embeds)
        return logits


def run():
    torch.manual_seed(0)
    model = OwlViTForObjectDetection()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    logits = model(torch.randn(2, 5, 4), torch.randint(0, 12, (3, 4)))
    loss = F.binary_cross_entropy_with_logits(logits, torch.randint(0, 2, logits.shape).float())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
