"""The dialect's passes. tether registers every MLIR pass when a Context is made, so importing
this module (as upstream programs do to register them) has nothing left to do."""
