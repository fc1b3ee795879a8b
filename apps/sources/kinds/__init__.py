"""The kinds of source: each lists what is there and fetches an item's bytes (base.Connector)."""
