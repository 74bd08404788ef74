"""practical-pytorch, char-rnn-classification tutorial: the reader replaced the manual update
`for p in rnn.parameters(): p.data.add_(-learning_rate, p.grad.data)` with
`optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)` and `optimizer.step()`, and the
loss stopped going down ("loss is big, and loss flow up and down, do not diminish"). Nothing fails.
The author found the cause: "I have the model instantiated twice - once directly after the RNN
class, and once before the main `for epoch in ...` loop (below the train function). Try moving the
optimizer to below the second one, so the params aren't reset." The optimizer held the first
RNN's parameters, which never get a gradient; the RNN that is trained is never stepped.
Source: https://github.com/spro/practical-pytorch/issues/9
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

all_letters = "abcdefghijklmnopqrstuvwxyz"
n_letters = len(all_letters)
all_categories = ["English", "French", "Korean"]
n_categories = len(all_categories)
category_lines = {"English": ["smith", "jones", "brown"], "French": ["dubois", "moreau", "laurent"],
                  "Korean": ["kim", "park", "choi"]}


def line_to_tensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.softmax(self.i2o(combined))
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


n_hidden = 16
rnn = RNN(n_letters, n_hidden, n_categories)

learning_rate = 0.005
criterion = nn.NLLLoss()


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    optimizer.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    optimizer.step()
    return output, loss.item()


rnn = RNN(n_letters, n_hidden, n_categories)
optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)

losses = []
for epoch in range(1, 31):
    category = all_categories[epoch % n_categories]
    line = category_lines[category][(epoch // n_categories) % 3]
    category_tensor = torch.tensor([all_categories.index(category)])
    output, loss = train(category_tensor, line_to_tensor(line))
    losses.append(loss)

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in rnn.parameters()]}
