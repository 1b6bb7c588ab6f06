"""The reproduced experiments: each a TOML file here and a module of the same name
(protocol.py says what they hold; runner.py runs them; claims.py judges the paper's
claims; docs/experiments.md walks through adding one)."""
