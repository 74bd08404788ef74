"""min-dalle's torch port generated images with `torch.no_grad()` written as
a statement at the top of `generate_image_tokens`: the call builds a context
manager and throws it away, so the encoder and the decoder's sampling loop
run with gradients on.  "`torch.no_grad()` is a context manager ... Simply
calling `no_grad()` will not disable gradients" (the fix "significantly
reduced the memory usage in torch").  Nothing raises; the tokens' logits
carry a graph through every decoding step.
Buggy line: `torch.no_grad()` as a statement in `generate_image_tokens`.
Source: https://github.com/kuprel/min-dalle/pull/24"""
import torch
import torch.nn as nn


class DalleBartEncoder(nn.Module):
    def __init__(self, vocab=12, d=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layer = nn.Linear(d, d)

    def forward(self, text_tokens):
        return torch.tanh(self.layer(self.embed(text_tokens)))


class DalleBartDecoder(nn.Module):
    def __init__(self, image_vocab=16, d=8, image_len=4):
        super().__init__()
        self.image_len = image_len
        self.embed = nn.Embedding(image_vocab, d)
        self.lm_head = nn.Linear(d, image_vocab)

    def forward(self, encoder_state, seed, record=None):
        torch.manual_seed(seed)
        token = torch.zeros(1, dtype=torch.long)
        state = encoder_state.mean(1)
        tokens = []
        for i in range(self.image_len):
            state = torch.tanh(state + self.embed(token))
            logits = self.lm_head(state)
            if record is not None:
                record.append(logits.requires_grad)
            token = torch.multinomial(torch.softmax(logits, -1), 1)[:, 0]
            tokens.append(token)
        return torch.stack(tokens, 1)


class MinDalleTorch:
    def __init__(self):
        self.encoder = DalleBartEncoder()
        self.decoder = DalleBartDecoder()

    def tokenize_text(self, text):
        return torch.tensor([[ord(c) % 12 for c in text]])

    def generate_image_tokens(self, text, seed, record=None):
        text_tokens = self.tokenize_text(text)
        torch.no_grad()  # expect: ADL021
        encoder_state = self.encoder(text_tokens)
        image_tokens = self.decoder.forward(encoder_state, seed, record=record)
        return image_tokens

    def generate_image(self, text, seed, record=None):
        image_tokens = self.generate_image_tokens(text, seed, record=record)
        return image_tokens.float() / 16


def bug_shows():
    """The decoder's logits carry a graph: gradients stayed on."""
    record = []
    MinDalleTorch().generate_image("a cat", seed=0, record=record)
    return all(record)
