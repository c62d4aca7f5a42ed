"""`mjbot review` and `mjbot replay --commentary`: what should have been played, and why.

One module per job: :mod:`evaluators` ranks every legal action of a decision with a policy
(:mod:`registry` says which evaluator a name means), :mod:`situation` says what the table
looked like (hand, waits, dangerous opponents), :mod:`game` reviews a whole game, :mod:`html`
renders it, :mod:`commentary` writes one sentence per move, :mod:`measure` scores the
predictions on real games.
"""
