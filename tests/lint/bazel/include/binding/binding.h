/* A binding's wrapper over tether handles; found only through the target's include path. */
#ifndef BINDING_H
#define BINDING_H
#include "tether.h"

#if BINDING_API_LEVEL != 2
#error "BINDING_API_LEVEL must come from the target's local_defines"
#endif

typedef struct {
  tether_op *h;
} binding_op;

#endif
