"""Imported by the fork server that worker processes are forked from
(adapter/thinking/worker_process.py, ``PRELOAD``), and by nothing else: its import does once,
in the server, the work that a worker's first search did for itself (:func:`mc.warm
<brain.policies.mc.policy.warm>`), so every worker forked from it starts with it done, its
pages shared with the server. A replacement worker is started just when the machine is busy
(its predecessor ran late), and there a cold first search was late in turn.
"""

from __future__ import annotations

from brain.policies.mc.policy import warm

warm()
