"""Fine-tuning Chinese CLIP with the tutorial's loop: the model's forward
normalises the image and text features with `/=` after computing them, and
the norm keeps the features for backward ("output 0 of DivBackward0, is at
version 1"); the fix in the thread divides out of place.
Source: https://github.com/modelscope/modelscope/issues/481"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VisualEncoder(nn.Module):
    def __init__(self, in_dim=12, width=16, output_dim=8):
        super().__init__()
        self.conv1 = nn.Linear(in_dim, width)
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Parameter(torch.randn(width, output_dim) * width ** -0.5)

    def forward(self, x):
        x = self.ln_post(F.gelu(self.conv1(x)))
        return x @ self.proj


class TextEncoder(nn.Module):
    def __init__(self, vocab=30, width=16, output_dim=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, width)
        self.text_projection = nn.Parameter(torch.randn(width, output_dim) * width ** -0.5)

    def forward(self, text):
        x = self.embedding(text).mean(1)
        return x @ self.text_projection


class CLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = VisualEncoder()
        self.bert = TextEncoder()
        self.logit_scale = nn.Parameter(torch.ones([]) * 2.659)

    def encode_image(self, image):
        return self.visual(image)

    def encode_text(self, text):
        return self.bert(text)

    def forward(self, image, text):
        image_features = self.encode_image(image)
        text_features = self.encode_text(text)

        image_features /= image_features.norm(dim=-1, keepdim=True)  # expect: ADL001
        text_features /= text_features.norm(dim=-1, keepdim=True)  # expect: ADL001
        return image_features, text_features, self.logit_scale.exp()


def train_step(model, optimizer, images, texts):
    image_features, text_features, logit_scale = model(images, texts)
    logits_per_image = logit_scale * image_features @ text_features.t()
    logits_per_text = logits_per_image.t()
    ground_truth = torch.arange(len(images))
    total_loss = (F.cross_entropy(logits_per_image, ground_truth) + F.cross_entropy(logits_per_text, ground_truth)) / 2
    optimizer.zero_grad()
    total_loss.backward()
    optimizer.step()


def run():
    torch.manual_seed(0)
    model = CLIP()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    train_step(model, optimizer, torch.randn(4, 12), torch.randint(0, 30, (4, 6)))
