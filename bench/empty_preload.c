/* empty_preload.c: a library with nothing in it, preloaded by load_cost's
 * spawn mode beside ours: what any LD_PRELOAD costs a process (the loader
 * opening, mapping and relocating one more object), the floor under the
 * libraries' own cost (issue 26). */
int empty_preload_marker;
