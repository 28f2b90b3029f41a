"""Benchmarks that print JSON lines."""
