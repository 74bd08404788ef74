"""inversecooking predicts a recipe's ingredients with a transformer decoder
whose `sample()` is also used in training: the model's `forward` calls
`ingredient_decoder.sample(...)` and computes the ingredient loss from the
logits it returns.  `sample()` stacked its per-step logits as
`torch.stack(logits, 1).data`, which cuts them from the graph: "I guess the
code needs to have some change ... logits = torch.stack(logits, 1).data -->
logits = torch.stack(logits, 1).  This will enable the require_grad to
remain true.  The training cannot do the backward" (fixed by the authors).
Training the ingredient predictor alone (`ingrs_only`) fails with "element 0
of tensors does not require grad and does not have a grad_fn".
Buggy line: `logits = torch.stack(logits, 1).data` in `DecoderTransformer.sample`.
Source: https://github.com/facebookresearch/inversecooking/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EncoderCNN(nn.Module):
    def __init__(self, embed_size=8):
        super().__init__()
        self.resnet = nn.Sequential(nn.Linear(12, embed_size), nn.ReLU())

    def forward(self, images, keep_cnn_gradients=False):
        return self.resnet(images)


class DecoderTransformer(nn.Module):
    def __init__(self, embed_size=8, vocab_size=6, seq_length=4):
        super().__init__()
        self.seq_length = seq_length
        self.embed_tokens = nn.Embedding(vocab_size, embed_size)
        self.layer = nn.Linear(2 * embed_size, embed_size)
        self.linear = nn.Linear(embed_size, vocab_size)

    def forward(self, img_features, prev_tokens):
        x = torch.cat([self.embed_tokens(prev_tokens), img_features], dim=-1)
        return self.linear(torch.tanh(self.layer(x)))

    def sample(self, img_features, greedy=True, temperature=1.0, first_token_value=0, replacement=True):
        fs = img_features.size(0)
        first_word = torch.full((fs,), first_token_value, dtype=torch.long)
        sampled_ids = [first_word]
        logits = []
        predicted_mask = torch.zeros(fs, self.linear.out_features)
        for i in range(self.seq_length):
            outputs = self.forward(img_features, sampled_ids[-1])
            if not replacement:
                outputs = outputs.masked_fill(predicted_mask.bool(), float("-inf"))
            logits.append(outputs)
            outputs = outputs / temperature
            predicted = outputs.argmax(-1)
            predicted_mask = predicted_mask.scatter(1, predicted.unsqueeze(1), 1.0)
            sampled_ids.append(predicted)
        sampled_ids = torch.stack(sampled_ids[1:], 1)
        logits = torch.stack(logits, 1).data  # missed: ADL004 silent even selected (a `.data` read that cuts the loss's graph)
        return sampled_ids, logits


class InverseCookingModel(nn.Module):
    def __init__(self, ingrs_only=True):
        super().__init__()
        self.image_encoder = EncoderCNN()
        self.ingredient_decoder = DecoderTransformer()
        self.crit_ingr = nn.BCELoss(reduction="mean")
        self.ingrs_only = ingrs_only

    def forward(self, img_inputs, target_ingrs, keep_cnn_gradients=False):
        img_features = self.image_encoder(img_inputs, keep_cnn_gradients)
        losses = {}
        target_one_hot = torch.zeros(img_inputs.size(0), self.ingredient_decoder.linear.out_features)
        target_one_hot = target_one_hot.scatter(1, target_ingrs, 1.0)
        ingr_ids, ingr_logits = self.ingredient_decoder.sample(img_features, greedy=True, temperature=1.0,
                                                               first_token_value=0, replacement=False)
        ingr_probs = F.softmax(ingr_logits, dim=-1)
        ingr_probs, _ = torch.max(ingr_probs, dim=1)
        losses["ingr_loss"] = self.crit_ingr(ingr_probs.clamp(1e-6, 1 - 1e-6), target_one_hot)
        if self.ingrs_only:
            return losses
        raise NotImplementedError("the recipe decoder is not part of this re-creation")


def run():
    torch.manual_seed(0)
    model = InverseCookingModel(ingrs_only=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for images, ingrs in [(torch.randn(2, 12), torch.randint(1, 6, (2, 3))) for _ in range(2)]:
        losses = model(images, ingrs)
        loss = losses["ingr_loss"].mean()
        model.zero_grad()
        loss.backward()
        optimizer.step()
