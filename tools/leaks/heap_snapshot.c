/* heap_snapshot.c: the tables of an input, made and freed together.
 * World: normal (an ordinary program). */
#include "heap_snapshot.h"

#include <errno.h>
#include <string.h>

int heap_snapshot_init(struct heap_snapshot *heap)
{
    memset(heap, 0, sizeof *heap);
    if (frame_table_init(&heap->frames) == 0) {
        if (stack_table_init(&heap->stacks) == 0) {
            if (live_blocks_init(&heap->blocks) == 0)
                return 0;
            stack_table_free(&heap->stacks);
        }
        frame_table_free(&heap->frames);
    }
    return -ENOMEM;
}

void heap_snapshot_free(struct heap_snapshot *heap)
{
    live_blocks_free(&heap->blocks);
    stack_table_free(&heap->stacks);
    frame_table_free(&heap->frames);
}
