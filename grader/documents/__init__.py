"""The arena's documents: their schemas, the one validator, YAML and JSON I/O, specs, submissions."""
