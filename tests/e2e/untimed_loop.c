/* untimed_loop.py's loop as a compiled program: `step N/T loss X` through C stdio's printf, no
   fflush, 200 ms a step and step 12 900 ms.  Into a pipe, stdio holds every line (about 500
   bytes) until exit, unless the stdout is line-buffered from outside (stdbuf -oL). */
#include <stdio.h>
#include <time.h>

enum { STEPS = 24, SLOW_STEP = 12 };

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(void) {
    for (int step = 1; step <= STEPS; step++) {
        sleep_ms(step == SLOW_STEP ? 900 : 200);
        printf("step %d/%d loss %.4f\n", step, STEPS, 2.5 - step / 100.0);
    }
    return 0;
}
