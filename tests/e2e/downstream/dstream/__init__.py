"""dstream: a downstream dialect's Python package, on tether.ir."""

from tether import ir

from . import _dstream

__all__ = ["register_dialect", "pixel_type", "is_pixel"]


def register_dialect(context=None):
    _dstream.register_dialect(ir._resolve_context(context))


def pixel_type(context=None):
    return ir.Type._CAPICreate(_dstream.pixel_type(ir._resolve_context(context)))


def is_pixel(type):
    return _dstream.is_pixel(type)


pixel_typeid = _dstream.pixel_typeid
memref_interface_typeid = _dstream.memref_interface_typeid
