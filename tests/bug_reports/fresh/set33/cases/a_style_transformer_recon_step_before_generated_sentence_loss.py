"""Stable-Style-Transformer (rungjoo/Stable-Style-Transformer), generation_model/amazon/train.py:
for each sentence the generator first takes an auto-encoder step (`recon_loss.backward(retain_graph=True)`,
`aed_trainer.step()`), then feeds the *same* decoder output `vocab_out` to a sentiment classifier
and trains the same parameters again with a second optimizer (`gen_cls_loss.backward()`,
`gen_trainer.step()`). On torch >= 1.5 the second backward fails with "one of the variables needed
for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor
[256, 50259]], which is output 0 of TBackward, is at version 2; expected version 1 instead"
(the output projection's weight, updated in place by the first step). The thread has no accepted
answer (the maintainer suggests an older torch); the correct version is PyTorch's own remedy:
run the decoder again after the first step, so the classifier loss is computed from, and
differentiated through, the updated weights.
Source: https://github.com/rungjoo/Stable-Style-Transformer/issues/1
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HID = 30, 16


class GenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HID)
        self.enc = nn.GRU(HID, HID, batch_first=True)
        self.att = nn.Linear(2, HID)
        self.dec = nn.GRU(HID, HID, batch_first=True)
        self.out = nn.Linear(HID, VOCAB)
        self.aed_params = list(self.parameters())

    def encoder(self, del_idx):
        _, h = self.enc(self.emb(del_idx))
        return h

    def decoder(self, enc_out, token_idx, attribute):
        h0 = enc_out + self.att(attribute).unsqueeze(0)
        dec_out, _ = self.dec(self.emb(token_idx), h0)
        return dec_out, self.out(dec_out)

    def recon_loss(self, token_idx, vocab_out):
        return F.cross_entropy(vocab_out[:, :-1].reshape(-1, VOCAB), token_idx[:, 1:].reshape(-1))

    def cls_loss(self, attribute, cls_out):
        return F.binary_cross_entropy_with_logits(cls_out, attribute)


class DisModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(VOCAB, HID)
        self.cls = nn.Linear(HID, 2)

    def gen_discriminator(self, vocab_out):
        probs = F.softmax(vocab_out, dim=-1)
        return self.cls(torch.tanh(self.proj(probs)).mean(1))


genmodel = GenModel()
dismodel = DisModel()
for p in dismodel.parameters():
    p.requires_grad_(False)

aed_trainer = torch.optim.Adamax(genmodel.aed_params, lr=1e-3)
gen_trainer = torch.optim.Adamax(genmodel.aed_params, lr=1e-2)
max_grad_norm = 10
attributes = [torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]])]

losses = []
for start in range(3):
    for i in range(2):
        token_idx = torch.randint(0, VOCAB, (1, 7))
        attribute = attributes[i]
        del_idx = token_idx[:, :4]

        """auto-encoder loss & training"""
        enc_out = genmodel.encoder(del_idx)
        dec_out, vocab_out = genmodel.decoder(enc_out, token_idx, attribute)
        recon_loss = genmodel.recon_loss(token_idx, vocab_out)

        aed_trainer.zero_grad()
        recon_loss.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(genmodel.aed_params, max_grad_norm)
        aed_trainer.step()

        """decoder classification loss & training"""
        gen_cls_out = dismodel.gen_discriminator(vocab_out)
        gen_cls_loss = genmodel.cls_loss(attribute, gen_cls_out)

        gen_trainer.zero_grad()
        gen_cls_loss.backward()
        torch.nn.utils.clip_grad_norm_(genmodel.aed_params, max_grad_norm)
        gen_trainer.step()
        losses.append(torch.stack([recon_loss.detach(), gen_cls_loss.detach()]))

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in genmodel.parameters()]}
