"""dstream: a downstream dialect's Python package, on tether.ir."""

from tether import ir

from . import _dstream

__all__ = ["register_dialect", "pixel_type", "is_pixel"]


def _context(context):
    context = context if context is not None else ir.Context.current
    if context is None:
        raise RuntimeError("no context given and no current context")
    return context


def register_dialect(context=None):
    _dstream.register_dialect(_context(context))


def pixel_type(context=None):
    return ir.Type._CAPICreate(_dstream.pixel_type(_context(context)))


def is_pixel(type):
    return _dstream.is_pixel(type)


pixel_typeid = _dstream.pixel_typeid


def pixel_static_typeid():
    """The pixel type's TypeID as the downstream library defines it (a tether.ir.TypeID)."""
    return ir.TypeID._CAPICreate(_dstream.pixel_typeid_capsule())
memref_interface_typeid = _dstream.memref_interface_typeid
