"""tether.extras: upstream's `mlir.extras` helpers (`types` shortcuts, `meta.region_op`)."""
