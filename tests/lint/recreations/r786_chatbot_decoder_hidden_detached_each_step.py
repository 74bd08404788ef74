"""paulilioaica/ChatBot, `main.py` with `chatbot.py`: an attention encoder-decoder chatbot
(`ChatBot` holding a shared embedding, a bidirectional GRU `EncoderRNN` and an attention
`DecoderRNN`).  The training loop decodes `max_target_len` steps, feeding each step's argmax back
as the next input, adds each step's cross-entropy to `loss`, and backpropagates once per
sequence; but inside the decoding loop it rebinds `decoder_hidden = decoder_hidden.detach()` after
every step.  The single `loss.backward()` therefore never reaches through the decoder's
recurrence: each step's loss trains the decoder GRU only through its last transition, and the
gradient that should flow back through the earlier hidden states is cut.
Re-created in my own words with the repository's structure: `EncoderRNN`, `Attention`,
`DecoderRNN.forward(input_step, prev_hidden, encoder_outputs)`, `ChatBot`, and the epoch loop of
`main.py` with one SGD optimizer over the whole model.
Nothing raises: `bug_shows()` compares the decoder GRU's gradient with the one the same loss
gives without the detach.
Source: https://github.com/paulilioaica/ChatBot/blob/58add2d327d0e925012d582c316d5beccad9e4d3/main.py"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class EncoderRNN(nn.Module):
    def __init__(self, hidden_size, embedding):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = embedding
        self.gru = nn.GRU(hidden_size, hidden_size, bidirectional=True)

    def forward(self, x, hidden=None):
        outputs, hidden = self.gru(self.embedding(x), hidden)
        outputs = outputs[:, :, :self.hidden_size] + outputs[:, :, self.hidden_size:]
        return outputs, hidden


class Attention(nn.Module):
    def __init__(self, attention_dim):
        super().__init__()
        self.W = nn.Linear(attention_dim, attention_dim, bias=False)

    def forward(self, decoder_hidden, encoder_out):
        encoder_out = self.W(encoder_out).permute(1, 0, 2)
        energies = encoder_out @ decoder_hidden.permute(1, 2, 0)
        mask = F.softmax(energies, dim=1)
        context = (encoder_out.permute(0, 2, 1) @ mask).permute(2, 0, 1)
        return context, mask


class DecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, embedding):
        super().__init__()
        self.embedding = embedding
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.attention = Attention(hidden_size)
        self.concat = nn.Linear(hidden_size * 2, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, input_step, prev_hidden, encoder_outputs):
        if len(input_step.shape) < 3:
            input_step = self.embedding(input_step)
        output, hidden = self.gru(input_step, prev_hidden)
        context, _ = self.attention(prev_hidden, encoder_outputs)
        concat_input = torch.cat((output.squeeze(0), context.squeeze(0)), 1)
        output = self.out(torch.tanh(self.concat(concat_input)))
        return output, hidden


class ChatBot(nn.Module):
    def __init__(self, hidden_size, vocab_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.encoder = EncoderRNN(hidden_size, self.embedding)
        self.decoder = DecoderRNN(hidden_size, output_size, self.embedding)


def decode_loss(model, criterion, input_variable, max_target_len, batch_size, hidden_size, detach_hidden):
    encoder_outputs, encoder_hidden = model.encoder(input_variable)
    decoder_input = torch.zeros(1, batch_size, hidden_size)
    decoder_hidden = torch.zeros(1, batch_size, hidden_size)
    loss = 0
    for t in range(max_target_len):
        decoder_output, decoder_hidden = model.decoder(decoder_input, decoder_hidden, encoder_outputs)
        _, topi = decoder_output.topk(1)
        decoder_input = torch.LongTensor([[topi[i][0] for i in range(batch_size)]])
        if detach_hidden:
            decoder_hidden = decoder_hidden.detach()  # missed: no rule, a recurrent state detached inside the one sequence a single backward covers
        target = torch.zeros(batch_size).long()
        loss += criterion(decoder_output, target)
    return loss


def run(epochs=1, detach_hidden=True, grads=None):
    torch.manual_seed(0)
    max_target_len, batch_size, hidden_size = 4, 4, 8
    model = ChatBot(hidden_size=hidden_size, vocab_size=10, output_size=5)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    input_variable = torch.zeros((6, batch_size)).long()
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = decode_loss(model, criterion, input_variable, max_target_len, batch_size, hidden_size,
                           detach_hidden)
        loss.backward()
        if grads is not None:
            grads.append(model.decoder.gru.weight_hh_l0.grad.clone())
        optimizer.step()


def bug_shows():
    with_detach, without_detach = [], []
    run(detach_hidden=True, grads=with_detach)
    run(detach_hidden=False, grads=without_detach)
    return not torch.allclose(with_detach[0], without_detach[0])
