# README's Python example: a scipy matrix, a numpy vector, an nn.Linear and a model with MLPs.
import numpy as np
import scipy.sparse
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                       torch.nn.Linear(64, 32))

    def forward(self, x):
        return self.mlp(x)


scipy_matrix = scipy.sparse.random(40, 30, density=0.2, format="csr", random_state=0)
numpy_vector = np.linspace(-1.0, 1.0, 30)
torch_linear = torch.nn.Linear(32, 16)
model = torch.nn.Sequential(Block(), Block())
# doc-test: after
assert y.shape == (40,)
