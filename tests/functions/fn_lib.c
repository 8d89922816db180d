/* A shared library of the function hooks' test, built with the same flags: its functions are named from its
 * own file through the load map (its load bias differs from the program's). */
static unsigned mix(unsigned x) { return x ^ (x >> 7); }
unsigned lib_work(unsigned x) { return mix(x * 31u); }
