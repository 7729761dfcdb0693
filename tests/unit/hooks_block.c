/* The hook layer's block checks, alone: the wide compares of the fill and
 * the guards find exactly the first changed byte, at every length and
 * every offset and alignment, and read nothing outside what they check. */
#define _GNU_SOURCE
#include "hooks/block.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "support.h"

#define FILL 0xef

/* Every start alignment in 0..15, every length up to 300, every offset:
 * the one changed byte is the one reported; an intact span is intact. */
Test(block, the_fill_check_finds_the_first_changed_byte_exactly)
{
    static unsigned char buffer[512] __attribute__((aligned(64)));
    for (size_t start = 0; start < 16; start++) {
        for (size_t length = 0; length <= 300; length++) {
            uintptr_t user = (uintptr_t)buffer + start;
            memset(buffer, 0x11, sizeof buffer);
            block_fill(user, length, SIZE_MAX, FILL);
            size_t changed = 12345;
            cr_assert(!block_fill_changed(user, length, SIZE_MAX, FILL, &changed),
                      "start %zu length %zu intact", start, length);
            for (size_t at = 0; at < length; at++) {
                ((unsigned char *)user)[at] = FILL ^ 0x80;
                if (at + 1 < length)
                    ((unsigned char *)user)[length - 1] = 0; /* a later change too */
                cr_assert(block_fill_changed(user, length, SIZE_MAX, FILL, &changed));
                cr_assert_eq(changed, at, "start %zu length %zu", start, length);
                block_fill(user, length, SIZE_MAX, FILL);
            }
        }
    }
}

/* fill_max: only the prefix is filled and checked. */
Test(block, only_the_first_limit_bytes_are_filled_and_checked)
{
    static unsigned char buffer[256];
    memset(buffer, 0, sizeof buffer);
    block_fill((uintptr_t)buffer, sizeof buffer, 100, FILL);
    cr_assert_eq(buffer[99], FILL);
    cr_assert_eq(buffer[100], 0);
    size_t changed;
    cr_assert(!block_fill_changed((uintptr_t)buffer, sizeof buffer, 100, FILL, &changed));
    buffer[99] = 1;
    cr_assert(block_fill_changed((uintptr_t)buffer, sizeof buffer, 100, FILL, &changed));
    cr_assert_eq(changed, 99);
}

/* A span that ends at an unmapped page: the checks read none of it. */
Test(block, a_check_reads_nothing_past_its_span)
{
    long page = 4096;
    unsigned char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(map, MAP_FAILED);
    cr_assert_eq(mprotect(map + page, page, PROT_NONE), 0);
    for (size_t length = 0; length <= 200; length++) {
        uintptr_t user = (uintptr_t)map + page - length;
        block_fill(user, length, SIZE_MAX, FILL);
        size_t changed;
        cr_assert(!block_fill_changed(user, length, SIZE_MAX, FILL, &changed));
    }
}

/* Guards of several sizes, around blocks of odd sizes: a changed byte
 * anywhere in either guard is found at its offset (the front one nearest
 * the block first). */
Test(block, a_changed_guard_byte_is_found_at_its_offset)
{
    static unsigned char buffer[1024] __attribute__((aligned(64)));
    size_t guards[] = { 0, 1, 8, 15, 16, 24, 64, 100 };
    for (size_t g = 0; g < sizeof guards / sizeof guards[0]; g++) {
        struct block_layout layout;
        block_layout_init(&layout, guards[g], 0x1234);
        for (size_t size = 0; size <= 40; size++) {
            memset(buffer, 0, sizeof buffer);
            uintptr_t user = (uintptr_t)buffer + 256;
            block_prepare(&layout, user, size, 16, 7, size + layout.rear_guard);
            long damage;
            cr_assert(!block_guards_damaged(&layout, user, size, &damage),
                      "guard %zu size %zu intact", guards[g], size);
            for (size_t at = 0; at < layout.rear_guard; at++) {
                unsigned char *byte = (unsigned char *)user + size + at;
                *byte ^= 1;
                cr_assert(block_guards_damaged(&layout, user, size, &damage));
                cr_assert_eq(damage, (long)(size + at), "guard %zu size %zu", guards[g], size);
                *byte ^= 1;
            }
            for (size_t back = 1; back <= layout.front_guard; back++) {
                unsigned char *byte = (unsigned char *)user - back;
                *byte ^= 1;
                cr_assert(block_guards_damaged(&layout, user, size, &damage));
                cr_assert_eq(damage, -(long)back, "guard %zu size %zu", guards[g], size);
                *byte ^= 1;
            }
        }
    }
}
