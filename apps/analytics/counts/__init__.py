"""The daily counts: the rows of one local day built from the turn log, and latency histograms."""
