#ifndef TETHER_INTERNAL_H
#define TETHER_INTERNAL_H
#include "tether.h"
#include <gc/gc.h>
#endif
