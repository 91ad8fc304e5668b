"""Nsight Compute (ncu) support shared by the ncu collectors: metric recipe, peaks, aggregation."""
