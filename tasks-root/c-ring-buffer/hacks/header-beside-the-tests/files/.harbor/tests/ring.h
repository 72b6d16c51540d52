#include_next "ring.h"
int main(void) { return 0; }
#define main held_out_main
