#ifndef RING_H
#define RING_H

#include <stddef.h>

#define RING_CAP 4

struct ring {
    int items[RING_CAP];
    size_t head;  /* index of the oldest value */
    size_t len;   /* how many values are held */
};

void ring_init(struct ring *r);
/* Add a value; when the ring is full, the oldest value is overwritten. */
void ring_push(struct ring *r, int value);
/* Remove the oldest value into *out; returns 0 when the ring is empty, else 1. */
int ring_pop(struct ring *r, int *out);
size_t ring_len(const struct ring *r);

#endif
