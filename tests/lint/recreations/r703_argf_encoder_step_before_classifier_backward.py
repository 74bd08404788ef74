"""ARGF (adversarial representation graph fusion for multimodal sentiment), issue 2: training
`train_mosi_graph.py` raises "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.cuda.FloatTensor [150, 150]], which is output 0 of
TBackward, is at version 2; expected version 1".  One batch runs four updates on the same
encoder outputs `a_en, v_en, l_en`: the encoder-decoder update (`g_loss.backward(retain_graph=
True)`, `optimizer_G.step()`, which steps the three encoders), then the classifier update on
`classifier_3(a_en)` ... (`c_loss.backward(retain_graph=True)`, `optimizer_E.step()`, the
encoders again), then the discriminator on `discriminator(a_en)` and the fusion classifier on
the concatenated encodings.  Each later backward runs through the encoders' graph, built before
`optimizer_G.step()` changed their weights in place.  The maintainer's answer: compute the
later losses from a fresh forward (re-assign instead of reusing the names).
Re-created in my own words with small MLP encoders/decoders, the discriminator, the per-modality
classifier and a small fusion classifier, and the loop's four stages as written.
Buggy lines: `optimizer_G.step()` and `optimizer_E.step()` before backward passes through the
encoder outputs computed before them.
Source: https://github.com/TmacMai/ARGF_multimodal_fusion/issues/2"""
import itertools

import torch
import torch.nn as nn


class Encoder_5(nn.Module):
    def __init__(self, in_size, hidden_size, dropout):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_size, hidden_size), nn.ReLU(), nn.Dropout(dropout),
                                 nn.Linear(hidden_size, hidden_size), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Decoder2(nn.Module):
    def __init__(self, hidden_size, out_size):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, out_size))

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.LeakyReLU(0.2), nn.Linear(hidden_size, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class classifier3(nn.Module):
    def __init__(self, in_size, output_dim):
        super().__init__()
        self.fc = nn.Linear(in_size, output_dim)

    def forward(self, x):
        return self.fc(x)


class graph11_new(nn.Module):
    def __init__(self, in_size, output_dim):
        super().__init__()
        self.attention = nn.Linear(in_size, 1)
        self.out = nn.Linear(in_size, output_dim)

    def forward(self, fusion):
        weights = torch.softmax(self.attention(fusion), dim=1)
        return self.out((weights * fusion).sum(1)), weights


def run():
    torch.manual_seed(0)
    audio_in, video_in, text_in, hid, output_dim, alpha = 5, 6, 7, 8, 1, 0.01
    encoder_a, encoder_v, encoder_l = Encoder_5(audio_in, hid, 0.1), Encoder_5(video_in, hid, 0.1), Encoder_5(text_in, hid, 0.1)
    decoder_a, decoder_v, decoder_l = Decoder2(hid, audio_in), Decoder2(hid, video_in), Decoder2(hid, text_in)
    discriminator = Discriminator(hid)
    classifier = graph11_new(in_size=hid, output_dim=output_dim)
    classifier_3 = classifier3(in_size=hid, output_dim=output_dim)
    criterion = nn.L1Loss()
    adversarial_loss = nn.BCELoss()
    pixelwise_loss = nn.L1Loss()
    optimizer_G = torch.optim.Adam(itertools.chain(encoder_a.parameters(), encoder_v.parameters(), encoder_l.parameters(),
                                                   decoder_a.parameters(), decoder_l.parameters(), decoder_v.parameters()), lr=1e-3)
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    optimizer_C = torch.optim.Adam(classifier.parameters(), lr=1e-3)
    optimizer_E = torch.optim.Adam(itertools.chain(encoder_a.parameters(), encoder_v.parameters(), encoder_l.parameters(),
                                                   classifier_3.parameters()), lr=1e-3)
    train_iterator = [(torch.randn(4, audio_in), torch.randn(4, video_in), torch.randn(4, text_in), torch.randn(4, 1)) for _ in range(2)]
    for x_a, x_v, x_t, y in train_iterator:
        # encoder-decoder
        optimizer_G.zero_grad()
        a_en, v_en, l_en = encoder_a(x_a), encoder_v(x_v), encoder_l(x_t)
        a_de, v_de, l_de = decoder_a(a_en), decoder_v(v_en), decoder_l(l_en)
        rl1 = pixelwise_loss(a_de, x_a) + pixelwise_loss(v_de, x_v) + pixelwise_loss(l_de, x_t)
        valid, fake = torch.ones(y.shape[0], 1), torch.zeros(y.shape[0], 1)
        g_loss = alpha * (adversarial_loss(discriminator(l_en), valid) + adversarial_loss(discriminator(v_en), valid)) + (1 - alpha) * rl1
        g_loss.backward(retain_graph=True)
        optimizer_G.step()  # expect: ADL003
        # classifier
        optimizer_E.zero_grad()
        a, v, l = classifier_3(a_en), classifier_3(v_en), classifier_3(l_en)
        c_loss = criterion(a, y) + criterion(l, y) + criterion(v, y)
        c_loss.backward(retain_graph=True)
        optimizer_E.step()  # expect: ADL003
        # discriminator
        optimizer_D.zero_grad()
        real_loss = adversarial_loss(discriminator(a_en), valid)
        fake_loss = adversarial_loss(discriminator(v_en), fake) + adversarial_loss(discriminator(l_en), fake)
        d_loss = 0.5 * (real_loss + fake_loss)
        d_loss.backward(retain_graph=True)
        optimizer_D.step()
        # fusion
        v_a = torch.cat([a_en.unsqueeze(1), v_en.unsqueeze(1)], 1)
        fusion = torch.cat([v_a, l_en.unsqueeze(1)], 1)
        optimizer_C.zero_grad()
        output, _ = classifier(fusion)
        loss = criterion(output, y)
        loss.backward()
        optimizer_C.step()
