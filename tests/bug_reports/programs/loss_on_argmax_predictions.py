"""The loss is computed on argmax predictions instead of the logits: "element 0 of tensors does
not require grad and does not have a grad_fn".
Source: https://php.bkmy88.com/faq/1835025.html (a Q&A on this training loop; the answer: give
the loss function the logits, argmax cuts the graph)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
loss_fn = nn.MSELoss()
optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
X_train = torch.randn(8, 4)
y_train = torch.randint(0, 3, (8,)).float()

model.train()
train_logits = model(X_train)
train_preds_probs = torch.softmax(train_logits, dim=1).argmax(dim=1).type(torch.float32)  # PRIMARY
loss = loss_fn(train_preds_probs, y_train)
optimiser.zero_grad()
loss.backward()
optimiser.step()
