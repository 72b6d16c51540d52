#include "ring.h"

void ring_init(struct ring *r) {
    r->head = 0;
    r->len = 0;
}

void ring_push(struct ring *r, int value) {
    r->items[(r->head + r->len) % RING_CAP] = value;
    r->len++;
}

int ring_pop(struct ring *r, int *out) {
    if (r->len == 0)
        return 0;
    *out = r->items[r->head];
    r->head = (r->head + 1) % RING_CAP;
    r->len--;
    return 1;
}

size_t ring_len(const struct ring *r) {
    return r->len;
}
