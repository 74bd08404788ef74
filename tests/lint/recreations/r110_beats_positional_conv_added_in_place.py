"""BEATs (audio pre-training, microsoft/unilm): the transformer encoder adds
its convolutional relative positional embedding in place,
`x_conv = self.pos_conv(x.transpose(1, 2)); x += x_conv`.  The convolution
keeps its input, a transposed view of `x`, for backward, so fine-tuning
fails with "modified by an inplace operation: [torch.cuda.FloatTensor
[32, 768, 248]]"; the pull request replaces it with `x = x.clone() + x_conv`.
Source: https://github.com/microsoft/unilm/pull/999"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, :-self.remove]
        return x


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=16, conv_pos=4, conv_pos_groups=2, layers=1):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.pos_conv = nn.Conv1d(embedding_dim, embedding_dim, kernel_size=conv_pos,
                                  padding=conv_pos // 2, groups=conv_pos_groups)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(embedding_dim, nhead=2, dim_feedforward=32, batch_first=True)
            for _ in range(layers)])
        self.layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, padding_mask=None):
        return self.extract_features(x, padding_mask)

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv  # missed: ADL001
        x = self.layer_norm(x)
        x = F.dropout(x, p=0.1, training=self.training)
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=padding_mask)
        return x


class BEATs(nn.Module):
    def __init__(self, embed=8, encoder_embed_dim=16, num_classes=4):
        super().__init__()
        self.patch_embedding = nn.Conv2d(1, embed, kernel_size=4, stride=4, bias=False)
        self.layer_norm = nn.LayerNorm(embed)
        self.post_extract_proj = nn.Linear(embed, encoder_embed_dim)
        self.encoder = TransformerEncoder(encoder_embed_dim)
        self.predictor = nn.Linear(encoder_embed_dim, num_classes)

    def extract_features(self, fbank):
        features = self.patch_embedding(fbank.unsqueeze(1))
        features = features.reshape(features.shape[0], features.shape[1], -1).transpose(1, 2)
        features = self.layer_norm(features)
        features = self.post_extract_proj(features)
        x = F.dropout(features, p=0.1, training=self.training)
        return self.encoder(x)

    def forward(self, fbank):
        x = self.extract_features(fbank)
        return self.predictor(x.mean(dim=1))


def run():
    torch.manual_seed(0)
    model = BEATs()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    loss = F.cross_entropy(model(torch.randn(2, 16, 16)), torch.tensor([1, 3]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
