/* strbuf.c: text out of MLIR. MLIR prints through callbacks that receive pieces of the text;
 * tpy_strbuf collects them in a growing buffer (raw memory: MLIR may print from any allocation
 * state) and makes one str or bytes of it at the end. A buffer that failed to grow makes the
 * result MemoryError, never a truncated text.
 */
#include "core.h"

#include <string.h>

void tpy_strbuf_append(MlirStringRef s, void *user) {
  tpy_strbuf *b = user;
  if (b->failed) return;
  if (b->len + s.length + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap : 256;
    while (b->len + s.length + 1 > ncap) ncap *= 2;
    char *p = PyMem_RawRealloc(b->data, ncap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->data = p;
    b->cap = ncap;
  }
  if (s.length) memcpy(b->data + b->len, s.data, s.length);
  b->len += s.length;
}

PyObject *tpy_strbuf_finish(tpy_strbuf *b) {
  PyObject *r = b->failed
                    ? PyErr_NoMemory()
                    : PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t)b->len, "replace");
  PyMem_RawFree(b->data);
  b->data = NULL;
  return r;
}

PyObject *tpy_strbuf_finish_bytes(tpy_strbuf *b) {
  PyObject *r = b->failed ? PyErr_NoMemory()
                          : PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
  PyMem_RawFree(b->data);
  b->data = NULL;
  return r;
}

PyObject *tpy_str_from_ref(MlirStringRef s) {
  return PyUnicode_DecodeUTF8(s.data ? s.data : "", (Py_ssize_t)s.length, "replace");
}
