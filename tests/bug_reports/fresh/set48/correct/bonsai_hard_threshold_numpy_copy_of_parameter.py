"""Training a Bonsai tree (a sparse tree-structured classifier for microcontrollers) with the
dense -> iterative hard thresholding (IHT) -> sparse retraining schedule. At the start of the IHT
phase, `runHardThrsd` passes the parameters themselves to the helper `hardThreshold`, which does
`np.copy(A)` to find the magnitude percentile; NumPy asks the tensor for its array and PyTorch
refuses: "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
The change (the maintainers' fix, PR 120): pass the parameters' data (`self.bonsaiObj.W.data`, ...)
to the thresholding helper, which writes the thresholded values back through `.data`.
Source: https://github.com/microsoft/EdgeML/issues/119
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)


def hardThreshold(A, s):
    # keep the top s fraction of entries of A by magnitude
    A_ = np.copy(A)
    A_ = A_.ravel()
    if len(A_) > 0:
        th = np.percentile(np.abs(A_), (1 - s) * 100.0, method="higher")
        A_[np.abs(A_) < th] = 0.0
    A_ = A_.reshape(A.shape)
    return torch.tensor(A_, requires_grad=True)


class Bonsai(nn.Module):
    def __init__(self, numClasses, dataDimension, projectionDimension, treeDepth, sigma):
        super().__init__()
        self.numClasses = numClasses
        self.internalNodes = 2 ** treeDepth - 1
        self.totalNodes = 2 * self.internalNodes + 1
        self.sigma = sigma
        self.Z = nn.Parameter(torch.randn(projectionDimension, dataDimension) * 0.1)
        self.W = nn.Parameter(torch.randn(numClasses * self.totalNodes, projectionDimension) * 0.1)
        self.V = nn.Parameter(torch.randn(numClasses * self.totalNodes, projectionDimension) * 0.1)
        self.T = nn.Parameter(torch.randn(self.internalNodes, projectionDimension) * 0.1)

    def forward(self, X, sigmaI):
        XZ = torch.matmul(self.Z, X.t()) / self.Z.shape[0]
        W_ = self.W[0:self.numClasses]
        V_ = self.V[0:self.numClasses]
        score = torch.matmul(W_, XZ) * torch.tanh(self.sigma * torch.matmul(V_, XZ))
        nodeProb = [torch.ones(1, X.shape[0])]
        for i in range(1, self.totalNodes):
            parent = (i - 1) // 2
            branch = torch.tanh(sigmaI * torch.matmul(self.T[parent:parent + 1], XZ))
            sign = 1.0 if i % 2 == 1 else -1.0
            nodeProb.append(nodeProb[parent] * (1 + sign * branch) / 2)
            Wi = self.W[i * self.numClasses:(i + 1) * self.numClasses]
            Vi = self.V[i * self.numClasses:(i + 1) * self.numClasses]
            score = score + nodeProb[i] * torch.matmul(Wi, XZ) * torch.tanh(self.sigma * torch.matmul(Vi, XZ))
        return score.t()


class BonsaiTrainer:
    def __init__(self, bonsaiObj, sW, sV, sZ, sT, learningRate):
        self.bonsaiObj = bonsaiObj
        self.sW, self.sV, self.sZ, self.sT = sW, sV, sZ, sT
        self.optimizer = torch.optim.Adam(self.bonsaiObj.parameters(), lr=learningRate)

    def runHardThrsd(self):
        currW = self.bonsaiObj.W.data
        currV = self.bonsaiObj.V.data
        currZ = self.bonsaiObj.Z.data
        currT = self.bonsaiObj.T.data
        self.bonsaiObj.W.data = torch.FloatTensor(hardThreshold(currW, self.sW).detach())
        self.bonsaiObj.V.data = torch.FloatTensor(hardThreshold(currV, self.sV).detach())
        self.bonsaiObj.Z.data = torch.FloatTensor(hardThreshold(currZ, self.sZ).detach())
        self.bonsaiObj.T.data = torch.FloatTensor(hardThreshold(currT, self.sT).detach())

    def train(self, Xtrain, Ytrain, totalBatches, batchSize):
        losses = []
        for counter in range(totalBatches):
            j = counter % (Xtrain.shape[0] // batchSize)
            batchX = Xtrain[j * batchSize:(j + 1) * batchSize]
            batchY = Ytrain[j * batchSize:(j + 1) * batchSize]
            self.optimizer.zero_grad()
            logits = self.bonsaiObj(batchX, 1.0)
            batchLoss = nn.functional.cross_entropy(logits, batchY)
            batchLoss.backward()
            self.optimizer.step()
            losses.append(batchLoss.item())
            if counter >= totalBatches // 3 and counter % 3 == 0:
                self.runHardThrsd()
        return losses


Xtrain = torch.randn(64, 10)
Ytrain = (Xtrain[:, 0] + Xtrain[:, 1] > 0).long()
bonsai = Bonsai(numClasses=2, dataDimension=10, projectionDimension=4, treeDepth=2, sigma=1.0)
trainer = BonsaiTrainer(bonsai, sW=0.5, sV=0.5, sZ=0.5, sT=0.5, learningRate=0.01)
losses = trainer.train(Xtrain, Ytrain, totalBatches=12, batchSize=16)

result = {"losses": losses, "params": [p.detach().clone() for p in bonsai.parameters()]}
