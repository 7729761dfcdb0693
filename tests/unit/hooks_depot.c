/* The stack depot alone: ids equal for equal stacks and distinct for
 * distinct ones across the table's growth, any id checked by get, and
 * growth under threads whose signal handlers put and get too. Counts, not
 * times: every test does a fixed amount of work. */
#define _GNU_SOURCE
#include "hooks/stack_depot.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "support.h"

#define WORDS 17 /* the thread and 16 frames, as the hooks store them */

/* Stack N of a family: words that look like a thread and return
 * addresses, all of them depending on N, some only in their low bits. */
static void make_stack(void **words, uint32_t family, uint32_t n)
{
    uint64_t x = ((uint64_t)family << 32 | n) * 0x9e3779b97f4a7c15u;
    words[0] = (void *)(uintptr_t)(1000 + family);
    for (int i = 1; i < WORDS; i++) {
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9u;
        words[i] = (void *)(uintptr_t)(0x7f0000000000u + (x & 0xfffffff) + (i == 1 ? n : 0));
    }
}

static int same_words(void *const *a, void *const *b, int count)
{
    return memcmp(a, b, (size_t)count * sizeof *a) == 0;
}

#define MANY 60000 /* past 4096 << 4 slots: five growths */

static stack_id many_ids[MANY];

Test(stack_depot, ids_stay_equal_and_distinct_while_the_table_grows, .timeout = 60)
{
    cr_assert_eq(stack_depot_init(1 << 28), 0);
    void *words[WORDS], *out[WORDS];
    for (uint32_t n = 0; n < MANY; n++) {
        make_stack(words, 1, n);
        many_ids[n] = stack_depot_put(words, WORDS);
        cr_assert_neq(many_ids[n], 0, "stack %u", n);
        /* The first ones again, while the levels they were put in are
         * copied into newer ones. */
        make_stack(words, 1, n / 7);
        cr_assert_eq(stack_depot_put(words, WORDS), many_ids[n / 7], "stack %u at %u", n / 7, n);
    }
    struct stack_depot_stats stats;
    stack_depot_stats(&stats);
    cr_assert_eq(stats.stacks, (size_t)MANY, "one entry per distinct stack");
    for (uint32_t n = 0; n < MANY; n++) {
        make_stack(words, 1, n);
        cr_assert_eq(stack_depot_put(words, WORDS), many_ids[n], "stack %u", n);
        cr_assert_eq(stack_depot_get(many_ids[n], out, WORDS), WORDS);
        cr_assert(same_words(words, out, WORDS), "stack %u read back", n);
    }
    /* Distinct: the ids, sorted by the arena's order, are all different. */
    for (uint32_t n = 1; n < MANY; n++)
        cr_assert_gt(many_ids[n], many_ids[n - 1], "appended in order, so increasing");
}

Test(stack_depot, stacks_that_differ_in_one_word_order_or_length_get_their_own_ids)
{
    cr_assert_eq(stack_depot_init(1 << 24), 0);
    void *base[WORDS], *other[WORDS];
    make_stack(base, 2, 0);
    stack_id id = stack_depot_put(base, WORDS);
    for (int i = 0; i < WORDS; i++) {
        memcpy(other, base, sizeof other);
        other[i] = (void *)((uintptr_t)other[i] ^ 1);
        cr_assert_neq(stack_depot_put(other, WORDS), id, "word %d changed", i);
        memcpy(other, base, sizeof other);
        other[i] = (void *)((uintptr_t)other[i] ^ ((uintptr_t)1 << 40));
        cr_assert_neq(stack_depot_put(other, WORDS), id, "word %d high bit", i);
    }
    for (int i = 0; i + 3 < WORDS; i++) {
        memcpy(other, base, sizeof other);
        void *swap = other[i];
        other[i] = other[i + 2]; /* pairs of words swapped */
        other[i + 2] = swap;
        swap = other[i + 1];
        other[i + 1] = other[i + 3];
        other[i + 3] = swap;
        cr_assert_neq(stack_depot_put(other, WORDS), id, "pairs at %d swapped", i);
    }
    for (int count = 1; count < WORDS; count++)
        cr_assert_neq(stack_depot_put(base, count), id, "first %d words", count);
    void *zero[2] = { base[0], NULL };
    cr_assert_neq(stack_depot_put(zero, 2), stack_depot_put(zero, 1), "a trailing zero counts");
    cr_assert_eq(stack_depot_put(base, WORDS), id);
    void *long_stack[STACK_DEPOT_MAX_FRAMES + 5];
    for (int i = 0; i < STACK_DEPOT_MAX_FRAMES + 5; i++)
        long_stack[i] = (void *)(uintptr_t)(0x1000 + i);
    stack_id truncated = stack_depot_put(long_stack, STACK_DEPOT_MAX_FRAMES + 5);
    cr_assert_eq(stack_depot_put(long_stack, STACK_DEPOT_MAX_FRAMES), truncated,
                 "kept to its first 64 frames");
}

/* The put with a hash made by stack_depot_hash (the hooks' own cache of
 * recent stacks uses one hash for both) is the put without: the same id
 * for a stack stored either way, in either order; out-of-range counts
 * give 0. */
Test(stack_depot, a_put_with_its_hash_is_the_plain_put)
{
    cr_assert_eq(stack_depot_init(1 << 24), 0);
    void *words[WORDS];
    for (uint32_t n = 0; n < 200; n++) {
        make_stack(words, 3, n);
        uint32_t hash = stack_depot_hash(words, WORDS);
        stack_id first = n % 2 ? stack_depot_put(words, WORDS)
                               : stack_depot_put_hashed(words, WORDS, hash);
        cr_assert_neq(first, 0);
        cr_assert_eq(stack_depot_put_hashed(words, WORDS, hash), first, "stack %u", n);
        cr_assert_eq(stack_depot_put(words, WORDS), first, "stack %u", n);
        void *back[WORDS];
        cr_assert_eq(stack_depot_get(first, back, WORDS), WORDS);
        cr_assert(same_words(back, words, WORDS));
    }
    cr_assert_eq(stack_depot_put_hashed(words, 0, 0), 0);
    cr_assert_eq(stack_depot_put_hashed(words, STACK_DEPOT_MAX_FRAMES + 1, 0), 0);
    cr_assert_eq(stack_depot_put_hashed(NULL, 2, 0), 0);
}

/* Every id up to past the arena's top: get answers only for those put
 * returned, and the frames are theirs. */
Test(stack_depot, get_answers_exactly_for_the_ids_put_returned, .timeout = 60)
{
    cr_assert_eq(stack_depot_init(1 << 24), 0);
    enum { STACKS = 9000 }; /* two growths */
    static stack_id ids[STACKS];
    void *words[STACK_DEPOT_MAX_FRAMES];
    for (uint32_t n = 0; n < STACKS; n++) {
        int count = 1 + (int)(n % 40);
        for (int i = 0; i < count; i++)
            words[i] = (void *)(uintptr_t)(n * 64 + i + 1);
        ids[n] = stack_depot_put(words, count);
        cr_assert_neq(ids[n], 0);
    }
    struct stack_depot_stats stats;
    stack_depot_stats(&stats);
    void *out[STACK_DEPOT_MAX_FRAMES];
    uint32_t next = 0, answered = 0;
    for (uint64_t id = 0; id <= stats.bytes_used / 8 + 64; id++) {
        int count = stack_depot_get((stack_id)id, out, STACK_DEPOT_MAX_FRAMES);
        if (next < STACKS && id == ids[next]) {
            cr_assert_eq(count, 1 + (int)(next % 40), "stack %u", next);
            for (int i = 0; i < count; i++)
                cr_assert_eq(out[i], (void *)(uintptr_t)(next * 64 + i + 1));
            next++;
            answered++;
        } else {
            cr_assert_eq(count, 0, "id %llu names no stack", (unsigned long long)id);
        }
    }
    cr_assert_eq(answered, (uint32_t)STACKS);
    cr_assert_eq(stack_depot_get(UINT32_MAX, out, 4), 0);
    cr_assert_eq(stack_depot_get((stack_id)(UINT32_MAX / 2), out, 4), 0);
    /* An id inside an entry whose first frame reads as a header (the
     * magic byte, a count of 10 that stays below the top) is refused: the
     * hash does not match and the table does not name it. */
    void *fake[3] = { (void *)(uintptr_t)0x005d000a00000000u, (void *)0x1, (void *)0x2 };
    stack_id faked = stack_depot_put(fake, 3);
    cr_assert_neq(faked, 0);
    for (uint32_t n = 0; n < 4; n++) {
        make_stack(words, 5, n);
        cr_assert_neq(stack_depot_put(words, WORDS), 0);
    }
    cr_assert_eq(stack_depot_get(faked + 1, out, 4), 0, "frames read as a header");
}

/* ---- growth under threads and signal handlers ---- */

#define THREADS 4
#define SHARED_STACKS 150000  /* every thread puts all of them: 4096 << 6 slots */
#define PASSES 3              /* the first stores, the others find */
#define HANDLER_STACKS 4096   /* put by the handlers, in whichever thread */

static stack_id shared_ids[THREADS][SHARED_STACKS];
static _Atomic stack_id handler_ids[HANDLER_STACKS];
static _Atomic unsigned handler_runs, handler_errors;
static _Atomic int workers_done;
static __thread unsigned handler_next;

/* In the handler: put a stack of the handlers' family and check it has one
 * id, whoever put it first; read an id put earlier back. */
static void put_and_get(int signal)
{
    (void)signal;
    int saved = errno;
    uint32_t n = (handler_next++ * 2654435761u) % HANDLER_STACKS;
    void *words[WORDS], *out[WORDS];
    make_stack(words, 3, n);
    stack_id id = stack_depot_put(words, WORDS);
    stack_id expected = 0;
    if (id == 0 ||
        (!atomic_compare_exchange_strong(&handler_ids[n], &expected, id) && expected != id))
        atomic_fetch_add(&handler_errors, 1);
    if (stack_depot_get(id, out, WORDS) != WORDS || !same_words(words, out, WORDS))
        atomic_fetch_add(&handler_errors, 1);
    atomic_fetch_add(&handler_runs, 1);
    errno = saved;
}

static void *put_all_shared(void *index_pointer)
{
    int t = (int)(uintptr_t)index_pointer;
    void *words[WORDS];
    for (int pass = 0; pass < PASSES; pass++)
        for (uint32_t k = 0; k < SHARED_STACKS; k++) {
            uint32_t n = (k * 7919u + (uint32_t)t * 10007u) % SHARED_STACKS; /* its own order */
            make_stack(words, 4, n);
            stack_id id = stack_depot_put(words, WORDS);
            if (pass > 0 && id != shared_ids[t][n])
                id = 0; /* changed: the check below fails */
            shared_ids[t][n] = id;
        }
    atomic_fetch_add(&workers_done, 1);
    return NULL;
}

Test(stack_depot, threads_and_their_signal_handlers_agree_on_ids_while_it_grows, .timeout = 120)
{
    cr_assert_eq(stack_depot_init(1 << 28), 0);
    struct sigaction action = { .sa_handler = put_and_get, .sa_flags = SA_RESTART };
    sigemptyset(&action.sa_mask);
    cr_assert_eq(sigaction(SIGUSR1, &action, NULL), 0);
    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        cr_assert_eq(pthread_create(&threads[t], NULL, put_all_shared, (void *)t), 0);
    /* Signals into the workers while they put, at most 400,000 of them. */
    for (unsigned sent = 0; atomic_load(&workers_done) < THREADS && sent < 400000; sent++)
        pthread_kill(threads[sent % THREADS], SIGUSR1);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    cr_assert_eq(atomic_load(&handler_errors), 0u, "of %u handler runs",
                 atomic_load(&handler_runs));
    cr_assert_gt(atomic_load(&handler_runs), 0u);
    cr_log_info("%u handler runs", atomic_load(&handler_runs));

    void *words[WORDS], *out[WORDS];
    for (uint32_t n = 0; n < SHARED_STACKS; n++) {
        cr_assert_neq(shared_ids[0][n], 0, "stack %u", n);
        for (int t = 1; t < THREADS; t++)
            cr_assert_eq(shared_ids[t][n], shared_ids[0][n], "stack %u, thread %d", n, t);
        make_stack(words, 4, n);
        cr_assert_eq(stack_depot_put(words, WORDS), shared_ids[0][n], "stack %u after", n);
        cr_assert_eq(stack_depot_get(shared_ids[0][n], out, WORDS), WORDS);
        cr_assert(same_words(words, out, WORDS), "stack %u read back", n);
    }
    size_t handler_distinct = 0;
    for (uint32_t n = 0; n < HANDLER_STACKS; n++) {
        stack_id id = atomic_load(&handler_ids[n]);
        if (id == 0)
            continue;
        handler_distinct++;
        make_stack(words, 3, n);
        cr_assert_eq(stack_depot_put(words, WORDS), id, "handler stack %u after", n);
    }
    struct stack_depot_stats stats;
    stack_depot_stats(&stats);
    cr_assert_eq(stats.stacks, SHARED_STACKS + handler_distinct,
                 "one entry per distinct stack: %zu stored", stats.stacks);
}
