"""Fine-tuning torchMoji (an LSTM sentiment / emoji model) on SS-Youtube with
`examples/finetune_youtube_last.py`: the model's forward ends with `if return_tensor: outputs =
outputs.data`, so the logits reach the loss cut off from the graph and `loss.backward()` raised
"element 0 of tensors does not require grad and does not have a grad_fn". The reporter made it
run with `loss = Variable(loss, requires_grad=True)` in finetuning.py: backward now succeeds on a
new leaf, no parameter gets a gradient, and "the loss are not decrease ... Each epochs loss almost
same" (val loss 0.67718 every epoch). The answer in the thread: remove the `outputs =
outputs.data` lines in model_def.py (then the Variable wrap is not needed): "then the loss starts
improving when I finetuned the model".
Source: https://github.com/huggingface/torchMoji/issues/21
expect: silent"""
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attention_vector = nn.Parameter(torch.randn(dim) * 0.05)

    def forward(self, inputs):
        logits = inputs.matmul(self.attention_vector)
        weights = torch.softmax(logits, dim=1)
        return (inputs * weights.unsqueeze(-1)).sum(dim=1)


class TorchMoji(nn.Module):
    def __init__(self, nb_classes, nb_tokens, embedding_dim=8, hidden_size=8, return_tensor=True):
        super().__init__()
        self.return_tensor = return_tensor
        self.embed = nn.Embedding(nb_tokens, embedding_dim)
        self.lstm_0 = nn.LSTM(embedding_dim, hidden_size, batch_first=True, bidirectional=True)
        self.lstm_1 = nn.LSTM(hidden_size * 2, hidden_size, batch_first=True, bidirectional=True)
        self.attention_layer = Attention(hidden_size * 4 + embedding_dim)
        self.output_layer = nn.Linear(hidden_size * 4 + embedding_dim, nb_classes)

    def forward(self, input_seqs):
        x = torch.tanh(self.embed(input_seqs))
        lstm_0_output, _ = self.lstm_0(x)
        lstm_1_output, _ = self.lstm_1(lstm_0_output)
        x = torch.cat((lstm_1_output, lstm_0_output, x), dim=2)
        x = self.attention_layer(x)
        outputs = self.output_layer(x)
        return outputs


def freeze_layers(model, unfrozen_keyword):
    for name, param in model.named_parameters():
        param.requires_grad = unfrozen_keyword in name


def fit_model(model, loss_op, optim_op, batches, epochs):
    epoch_losses = []
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for X, y in batches:
            optim_op.zero_grad()
            output = model(X)
            loss = loss_op(output, y)
            loss.backward()
            optim_op.step()
            total += loss.item()
        epoch_losses.append(total / len(batches))
    return epoch_losses


model = TorchMoji(nb_classes=2, nb_tokens=40)
# 'last' method: only the new output layer is trained
freeze_layers(model, unfrozen_keyword='output_layer')
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
loss_op = nn.CrossEntropyLoss()
batches = [(torch.randint(0, 40, (6, 9)), torch.randint(0, 2, (6,))) for _ in range(3)]

epoch_losses = fit_model(model, loss_op, optimizer, batches, epochs=3)

result = {
    "epoch_losses": torch.tensor(epoch_losses),
    "output_layer": [p.detach().clone() for p in model.output_layer.parameters()],
}
