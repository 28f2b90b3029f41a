"""The Chinook digital music store pack (see ``pack.yaml``)."""
