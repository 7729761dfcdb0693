/* The profile's facts and renderers in one process (no preload): counts
 * put on stacks made of this program's own addresses are gathered,
 * named and written as pprof (gzipped or not) and as folded stacks, so
 * that the normal-world half of the profiles runs under ASan and
 * Valgrind too (make test-asan, make test-valgrind). */
#define _GNU_SOURCE
#include "hooks/profile_render.h"
#include "hooks/stack_counts.h"

#include <stdio.h>
#include <sys/mman.h>

#include "support.h"

__attribute__((noinline)) void profiled_leaf_site(void)
{
    __asm__ volatile("nop; nop; nop; nop");
}

__attribute__((noinline)) void profiled_caller(void)
{
    __asm__ volatile("nop; nop; nop; nop");
}

/* A return address inside FUNCTION: resolved as address - 1, in it. */
static void *inside(void (*function)(void))
{
    return (char *)function + 3;
}

static void count_two_sites(void)
{
    cr_assert_eq(stack_depot_init(1 << 24), 0);
    cr_assert_eq(stack_counts_init(1 << 10), 0);
    void *leaf[] = { (void *)1, inside(profiled_leaf_site), inside(profiled_caller) };
    void *other_thread[] = { (void *)2, inside(profiled_leaf_site), inside(profiled_caller) };
    void *caller[] = { (void *)1, inside(profiled_caller) };
    stack_id a = stack_depot_put(leaf, 3), b = stack_depot_put(other_thread, 3);
    stack_id c = stack_depot_put(caller, 2);
    for (int i = 0; i < 3; i++)
        stack_counts_allocated(a, 100);
    stack_counts_freed(a, 100);
    stack_counts_allocated(b, 50); /* the same frames: one sample with a's */
    stack_counts_allocated(c, 7);
}

static char *read_fd(int fd, size_t *length)
{
    off_t size = lseek(fd, 0, SEEK_END);
    cr_assert_geq(size, 0);
    char *bytes = calloc(1, (size_t)size + 1);
    cr_assert_eq(pread(fd, bytes, (size_t)size, 0), size);
    *length = (size_t)size;
    return bytes;
}

static int find_bytes(const char *haystack, size_t length, const char *needle)
{
    return memmem(haystack, length, needle, strlen(needle)) != NULL;
}

Test(profile_facts, gathered_merged_and_named, .init = count_two_sites)
{
    struct heap_profile profile;
    cr_assert_eq(profile_facts_gather(&profile), 0);
    cr_assert_eq(profile.sample_count, 2, "two distinct frame lists, the threads merged");
    cr_expect_eq(profile.totals[PROFILE_ALLOC_OBJECTS], 5);
    cr_expect_eq(profile.totals[PROFILE_ALLOC_SPACE], 357);
    cr_expect_eq(profile.totals[PROFILE_INUSE_OBJECTS], 4);
    cr_expect_eq(profile.totals[PROFILE_INUSE_SPACE], 257);
    /* The heap is at its highest now: the peak is the present. */
    cr_expect_eq(profile.totals[PROFILE_PEAK_SPACE], 257);
    int named = 0;
    for (size_t f = 0; f < profile.function_count; f++)
        named += strcmp(profile.functions[f].name, "profiled_leaf_site") == 0 ||
                 strcmp(profile.functions[f].name, "profiled_caller") == 0;
    cr_expect_eq(named, 2, "each function once");
    int with_build_id = 0;
    for (size_t m = 0; m < profile.mapping_count; m++)
        with_build_id += strlen(profile.mappings[m].build_id) == 40;
    cr_expect_gt(with_build_id, 0);
    for (size_t l = 0; l < profile.location_count; l++)
        cr_expect_neq(profile.locations[l].mapping, 0, "in this program's text");
    profile_facts_free(&profile);
}

Test(profile_facts, folded_outermost_first, .init = count_two_sites)
{
    struct heap_profile profile;
    cr_assert_eq(profile_facts_gather(&profile), 0);
    int fd = memfd_create("folded", 0);
    cr_assert_geq(fd, 0);
    cr_assert_eq(profile_write_folded(&profile, fd, PROFILE_INUSE_SPACE), 0);
    size_t length;
    char *text = read_fd(fd, &length);
    cr_expect(strstr(text, "profiled_caller;profiled_leaf_site 250\n") != NULL, "%s", text);
    cr_expect(strstr(text, "profiled_caller 7\n") != NULL, "%s", text);
    free(text);
    close(fd);
    profile_facts_free(&profile);
}

Test(profile_facts, pprof_plain_and_gzipped, .init = count_two_sites)
{
    struct heap_profile profile;
    cr_assert_eq(profile_facts_gather(&profile), 0);
    int plain = memfd_create("plain", 0), zipped = memfd_create("zipped", 0);
    cr_assert(plain >= 0 && zipped >= 0);
    cr_assert_eq(profile_write_pprof(&profile, plain, 0), 0);
    cr_assert_eq(profile_write_pprof(&profile, zipped, 1), 0);
    size_t plain_length, zipped_length;
    char *bytes = read_fd(plain, &plain_length), *gz = read_fd(zipped, &zipped_length);
    /* The string table: every type and function name, once. */
    const char *strings[] = { "alloc_objects", "inuse_space", "peak_space", "bytes", "count",
                              "profiled_leaf_site", "profiled_caller" };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        cr_expect(find_bytes(bytes, plain_length, strings[i]), "%s", strings[i]);
    cr_expect(zipped_length > 18 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b,
              "a gzip member");
    free(bytes);
    free(gz);
    close(plain);
    close(zipped);
    profile_facts_free(&profile);
}
