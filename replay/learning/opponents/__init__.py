"""Training and evaluation of the opponent models (brain/opponents) on decision datasets."""
