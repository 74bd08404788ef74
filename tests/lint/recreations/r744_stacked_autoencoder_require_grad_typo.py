"""pytorch-AutoEncoders, issue 2 ("in train_whole, `param.require_grad = True` should be
`requires_grad`"): the stacked autoencoder is pretrained layer by layer, `train_layers` freezing
every earlier layer with `lock_grad()` (`param.requires_grad = False`).  `train_whole` then means
to unfreeze the whole network for fine-tuning with `param.require_grad = True` -- a new, unused
attribute: the pretrained encoder layers stay frozen, and "training the whole model" trains only
the last layer.  Both loops also sum the loss tensors into `sum_loss`.
Re-created in my own words with the repository's structure: `AutoEncoderLayer` with
`lock_grad`/`acquire_grad` and its self-training switch, `StackedAutoEncoder` over the layer list,
`train_layers` (greedy layer-wise pretraining with earlier layers frozen), `train_whole`, and the
script's main sequence.
Nothing raises: `bug_shows()` shows the first encoder layer's weights unchanged by `train_whole`.
Buggy line: `param.require_grad = True`.
Source: https://github.com/LitoNeo/pytorch-AutoEncoders/issues/2"""
import torch
from torch import nn, optim

batch_size = 8


class AutoEncoderLayer(nn.Module):
    def __init__(self, input_dim=None, output_dim=None, SelfTraining=False):
        super(AutoEncoderLayer, self).__init__()
        self.in_features = input_dim
        self.out_features = output_dim
        self.is_training_self = SelfTraining
        self.encoder = nn.Sequential(nn.Linear(self.in_features, self.out_features, bias=True), nn.Sigmoid())
        self.decoder = nn.Sequential(nn.Linear(self.out_features, self.in_features, bias=True), nn.Sigmoid())

    def forward(self, x):
        out = self.encoder(x)
        if self.is_training_self:
            return self.decoder(out)
        else:
            return out

    def lock_grad(self):
        for param in self.parameters():
            param.requires_grad = False

    def acquire_grad(self):
        for param in self.parameters():
            param.requires_grad = True

    @property
    def is_training_layer(self):
        return self.is_training_self

    @is_training_layer.setter
    def is_training_layer(self, other: bool):
        self.is_training_self = other


class StackedAutoEncoder(nn.Module):
    def __init__(self, layers_list=None):
        super(StackedAutoEncoder, self).__init__()
        self.layers_list = layers_list
        self.initialize()
        self.encoder_1 = self.layers_list[0]
        self.encoder_2 = self.layers_list[1]
        self.encoder_3 = self.layers_list[2]
        self.encoder_4 = self.layers_list[3]

    def initialize(self):
        for layer in self.layers_list:
            layer.is_training_layer = False

    def forward(self, x):
        out = x
        out = self.encoder_1(out)
        out = self.encoder_2(out)
        out = self.encoder_3(out)
        out = self.encoder_4(out)
        return out


def get_loader():
    generator = torch.Generator().manual_seed(5)
    return [(torch.rand(batch_size, 16, generator=generator), None) for _ in range(3)]


def train_layers(layers_list=None, layer=None, epoch=None):
    train_loader = get_loader()
    optimizer = optim.SGD(layers_list[layer].parameters(), lr=0.1)
    criterion = nn.BCELoss()
    for epoch_index in range(epoch):
        sum_loss = 0.
        if layer != 0:
            for index in range(layer):
                layers_list[index].lock_grad()
                layers_list[index].is_training_layer = False

        for batch_index, (train_data, _) in enumerate(train_loader):
            out = train_data.view(train_data.size(0), -1)
            if layer != 0:
                for l in range(layer):
                    out = layers_list[l](out)
            pred = layers_list[layer](out)

            optimizer.zero_grad()
            loss = criterion(pred, out)
            sum_loss += loss  # expect: ADL023
            loss.backward()
            optimizer.step()


def train_whole(model=None, epoch=2):
    for param in model.parameters():
        param.require_grad = True  # expect: ADL016

    train_loader = get_loader()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    for epoch_index in range(epoch):
        sum_loss = 0.
        for batch_index, (train_data, _) in enumerate(train_loader):
            x = train_data.view(train_data.size(0), -1)
            out = model(x)
            optimizer.zero_grad()
            loss = criterion(out, x)
            sum_loss += loss  # expect: ADL023
            loss.backward()
            optimizer.step()


def build_and_pretrain():
    torch.manual_seed(0)
    encoder_1 = AutoEncoderLayer(16, 8, SelfTraining=True)
    encoder_2 = AutoEncoderLayer(8, 4, SelfTraining=True)
    decoder_3 = AutoEncoderLayer(4, 8, SelfTraining=True)
    decoder_4 = AutoEncoderLayer(8, 16, SelfTraining=True)
    layers_list = [encoder_1, encoder_2, decoder_3, decoder_4]
    for level in range(len(layers_list)):
        train_layers(layers_list=layers_list, layer=level, epoch=1)
    return StackedAutoEncoder(layers_list=layers_list)


def run():
    model = build_and_pretrain()
    train_whole(model=model, epoch=2)
    return model


def bug_shows():
    model = build_and_pretrain()
    before = model.encoder_1.encoder[0].weight.detach().clone()
    train_whole(model=model, epoch=2)
    return torch.equal(before, model.encoder_1.encoder[0].weight)
