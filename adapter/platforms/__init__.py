"""The platform sessions: one module per platform (Botzone, Tenhou, NTPU, mjai) that speaks its
codec (protocols/) over its transport and asks the brain; the Botzone upload zip is built here
too, since it ships just the Botzone session. Kept empty: the zip carries this file."""
