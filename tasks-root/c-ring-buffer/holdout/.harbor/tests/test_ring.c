#include <stdio.h>
#include "ring.h"

static int failures;

#define EXPECT(cond) do { if (!(cond)) { printf("FAIL line %d: %s\n", __LINE__, #cond); failures++; } } while (0)

int main(void) {
    struct ring r;
    int v = -1;

    ring_init(&r);
    EXPECT(ring_pop(&r, &v) == 0);
    for (int i = 1; i <= 3; i++)
        ring_push(&r, i);
    EXPECT(ring_len(&r) == 3);
    EXPECT(ring_pop(&r, &v) == 1 && v == 1);

    /* Fill past capacity: 2 3 4 5 6 7 held, capacity 4, so 4 5 6 7 remain. */
    for (int i = 4; i <= 7; i++)
        ring_push(&r, i);
    EXPECT(ring_len(&r) == RING_CAP);
    for (int want = 4; want <= 7; want++)
        EXPECT(ring_pop(&r, &v) == 1 && v == want);
    EXPECT(ring_len(&r) == 0);
    EXPECT(ring_pop(&r, &v) == 0);

    /* Many wraps. */
    for (int i = 0; i < 103; i++)
        ring_push(&r, i);
    for (int want = 99; want <= 102; want++)
        EXPECT(ring_pop(&r, &v) == 1 && v == want);

    printf("%d failure(s)\n", failures);
    return failures != 0;
}
