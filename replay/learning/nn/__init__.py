"""Training the neural policy (issue 17): dataset rows to network inputs (numpy, data.py) and
the torch trainer that exports weights for brain/nn (train.py; the only module needing torch).
"""
