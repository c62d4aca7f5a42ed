"""Decision datasets with hidden truth: self-play and imported games in one versioned schema
(README.md beside this file)."""
