/* tether-trial: the trial helper (trial/server.c), started by libtether itself (trial/client.c). */
#define _GNU_SOURCE /* close_range */
#include <unistd.h>

#include "../tether.h"

int main(void) {
  /* Nothing of the caller's but the socket: a pipe's other end held here would keep it open. */
  close_range(3, ~0U, 0);
  return tether_trial_serve(0, 1);
}
