"""AidenDurrant/SimCLR-Pytorch fine-tunes a linear classifier on the frozen
SimCLR encoder and evaluates it on the validation set after every epoch.
The reporter: "In the original implementation, the evaluation is performed
with gradients when finetuning.  This can be corrected by wrapping the
evaluation in a torch.no_grad()".  The encoder is in eval mode, the
classifier's parameters still require grad, and every validation batch
builds a graph through it.  Nothing raises.
Buggy line: `output = mlp(encoder(inputs))` in `evaluate`.
Source: https://github.com/AidenDurrant/SimCLR-Pytorch/pull/7"""
import torch
import torch.nn as nn


def evaluate(encoder, mlp, dataloaders, mode, epoch, args, record=None):
    epoch_valid_loss, epoch_valid_acc = 0.0, 0.0
    mlp.eval()
    encoder.eval()
    criterion = nn.CrossEntropyLoss()
    for inputs, target in dataloaders[mode]:
        output = mlp(encoder(inputs))  # expect: ADL031
        loss = criterion(output, target)
        acc = (output.argmax(1) == target).float().mean()
        epoch_valid_loss += loss.item()
        epoch_valid_acc += acc.item()
        if record is not None:
            record.append(loss)
    return epoch_valid_loss / len(dataloaders[mode]), epoch_valid_acc / len(dataloaders[mode])


def finetune(encoder, mlp, dataloaders, args, record=None):
    encoder.requires_grad_(False)
    optimizer = torch.optim.SGD(mlp.parameters(), lr=args["finetune_learning_rate"], momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    best_valid_acc = 0.0
    for epoch in range(args["finetune_epochs"]):
        mlp.train()
        for inputs, target in dataloaders["train"]:
            optimizer.zero_grad()
            loss = criterion(mlp(encoder(inputs)), target)
            loss.backward()
            optimizer.step()
        valid_loss, valid_acc = evaluate(encoder, mlp, dataloaders, "valid", epoch, args, record)
        best_valid_acc = max(best_valid_acc, valid_acc)
    return best_valid_acc


def bug_shows():
    """The validation losses carry graphs through the classifier."""
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
    mlp = nn.Linear(16, 3)
    data = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(2)]
    record = []
    finetune(encoder, mlp, {"train": data, "valid": data}, {"finetune_learning_rate": 0.1, "finetune_epochs": 1}, record)
    return all(loss.grad_fn is not None for loss in record)
