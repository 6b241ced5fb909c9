"""Trains a network outside lazyvi and saves its state dict, as a user would.

    python3 train_state_dict.py DATA.csv MODEL.pt [X.csv PRED.csv]

DATA.csv has a header and the response in its last column (vi simulate
writes such files). The network is build() of tanh.py next to this script;
it is trained on the features standardised by their own mean and standard
deviation (lazyvi feeds its models standardised features) to predict the
response itself, then saved with torch.save(net.state_dict(), MODEL.pt).
With X.csv (features only, header) it also writes the network's
predictions on those rows, unstandardised, to PRED.csv, one a line.
"""

import importlib.util
import os
import sys

import numpy as np
import torch


def main(data, out, x_csv=None, pred_csv=None):
    torch.manual_seed(0)
    spec = importlib.util.spec_from_file_location("tanh", os.path.join(os.path.dirname(__file__), "tanh.py"))
    tanh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tanh)

    d = np.loadtxt(data, delimiter=",", skiprows=1)
    x, y = torch.tensor(d[:, :-1]), torch.tensor(d[:, -1])
    x = (x - x.mean(0)) / x.std(0, unbiased=False)
    net = tanh.build(x.shape[1], 1).double()
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for epoch in range(60):
        for idx in torch.randperm(len(y)).split(128):
            opt.zero_grad()
            loss = ((net(x[idx])[:, 0] - y[idx]) ** 2).mean()
            loss.backward()
            opt.step()
    torch.save(net.state_dict(), out)

    if x_csv:
        xp = torch.tensor(np.loadtxt(x_csv, delimiter=",", skiprows=1, ndmin=2))
        with torch.no_grad():
            p = net(xp)[:, 0]
        with open(pred_csv, "w") as f:
            f.writelines(repr(float(v)) + "\n" for v in p)


if __name__ == "__main__":
    main(*sys.argv[1:])
