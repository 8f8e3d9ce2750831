"""The attribute builders generated dialect classes use (upstream's ir.py registers the same
kinds): ``AttrBuilder.get("I32Attr")(value, context)``. Filled in with the dialects."""
