"""Model providers for the answer path.

No Django imports here: configuration is passed in, so providers run and test alone.
"""
