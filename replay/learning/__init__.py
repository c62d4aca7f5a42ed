"""Training from datasets: the opponent models (opponents/) and the neural policy (nn/). Beside
replay/dataset, which turns logs and imported games into the rows both read."""
