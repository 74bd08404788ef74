"""Course notebook training loop: the test step sums the batch losses inside
`torch.inference_mode()` and divides them by the number of batches after the block, in place;
the sum is an inference tensor.
Source: https://github.com/mrdbourke/pytorch-deep-learning/issues/397 ("Inplace update to inference
tensor outside InferenceMode is not allowed" at `test_loss /= len(data_loader)`; answer: the
averaging lines belong inside the `with torch.inference_mode():` block, indented).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(16, 10), nn.ReLU(), nn.Linear(10, 3))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_batches = [(torch.randn(4, 1, 4, 4), torch.randint(0, 3, (4,))) for _ in range(3)]
test_batches = [(torch.randn(4, 1, 4, 4), torch.randint(0, 3, (4,))) for _ in range(2)]


def train_step(model, batches):
    model.train()
    for X, y in batches:
        loss = loss_fn(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.detach()


def test_step(model, batches):
    test_loss, test_acc = 0, 0
    model.eval()
    with torch.inference_mode():
        for X, y in batches:
            test_pred = model(X)
            test_loss += loss_fn(test_pred, y)
            test_acc += (test_pred.argmax(dim=1) == y).float().mean()
    test_loss /= len(batches)
    test_acc /= len(batches)
    return test_loss, test_acc


history = []
for epoch in range(2):
    train_loss = train_step(model, train_batches)
    test_loss, test_acc = test_step(model, test_batches)
    history.append((train_loss, test_loss.clone(), test_acc.clone()))
result = {"history": [torch.stack(row) for row in history], "params": [p.detach() for p in model.parameters()]}
