"""The neural policy's numpy side: the seat-view encoding, the action heads and the forward
pass (issue 17). numpy only: training lives in replay/learning/nn and is the only code that needs
torch.
"""
