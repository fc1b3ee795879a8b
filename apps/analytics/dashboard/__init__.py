"""The dashboard's reads (periods from the daily counts, the question lists) and its views as SVG charts and CSV."""
