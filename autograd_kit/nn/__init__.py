"""``nn``: building networks out of modules, as in ``torch.nn``.

``module.py``     Module: registers parameters and sub-modules, walks the tree,
                  state_dict / load_state_dict, to(device), train() / eval()
``parameter.py``  Parameter: a leaf tensor that a Module registers
``layers.py``     Linear, activations, Flatten, Dropout; Sequential, ModuleList
``loss.py``       MSELoss, L1Loss, CrossEntropyLoss, NLLLoss, BCELoss
``loss_more.py``  BCEWithLogitsLoss, SmoothL1Loss, HuberLoss (``_reduction.py``: the
                  old size_average= / reduce= keywords)
``conv.py``       Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Unflatten
``rnn.py``        RNNCell, LSTMCell, GRUCell: one step of a recurrent network
``functional.py`` the same computations as functions (``import ... as F``); the image
                  ones in ``functional_conv.py``, the newer losses in ``functional_losses.py``
``init.py``       weight initialisation schemes (xavier, kaiming...)
``utils.py``      gradient clipping

>>> import autograd_kit as torch
>>> from autograd_kit import nn
>>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
>>> model
Sequential(
  (0): Linear(in_features=2, out_features=3, bias=True)
  (1): ReLU()
)
>>> [name for name, _ in model.named_parameters()]
['0.weight', '0.bias']
"""
from __future__ import annotations

from . import functional, init, utils
from .layers import (Dropout, Flatten, Identity, LeakyReLU, Linear, LogSoftmax, ModuleList,
                     ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .loss import BCELoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .conv import AdaptiveAvgPool2d, AvgPool2d, Conv2d, MaxPool2d, Unflatten
from .loss_more import BCEWithLogitsLoss, HuberLoss, SmoothL1Loss
from .parameter import Parameter
from .rnn import GRUCell, LSTMCell, RNNCell

__all__ = ["Module", "Parameter", "Linear", "Identity", "ReLU", "LeakyReLU", "Tanh",
           "Sigmoid", "Softmax", "LogSoftmax", "Flatten", "Dropout", "Sequential",
           "ModuleList", "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
           "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Unflatten",
           "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "RNNCell", "LSTMCell", "GRUCell",
           "functional", "init", "utils"]
