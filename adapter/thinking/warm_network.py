"""Imported by the fork server that worker processes are forked from, where the policy plays
the network (``mc`` with ``fast=nn``: adapter/thinking/worker_process.py adds it to the
preload then), and by nothing else: its import reads every variant's network once, in the
server (:func:`nn.warm <brain.policies.nn.warm>`), so every worker forked from it finds the
weights built, their pages shared with the server, where each read and built them at its
first decision. A policy that never plays the network does not pay for it here.
"""

from __future__ import annotations

from brain.policies.nn import warm

warm()
